import GeofenceCore
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A Shapefile's own counts, read from the headers of its files: how many
/// shapes its index (.shx) lists, and how many records its table (.dbf)
/// holds, of which how many are marked deleted.
///
/// Shapes and records pair by position, so a .dbf with fewer records than
/// the .shp has shapes loses the last shapes, and one with more gives some
/// records no shape; GDAL reads either without an error (it only prints a
/// debug message). The importer refuses both. The count of deleted records
/// says how many features a whole layer gives: GDAL skips them.
struct ShapefileCounts {
    var shapes: Int
    /// Nil for a Shapefile without a .dbf (its features have no properties).
    var records: Int?
    var deleted = 0

    /// The counts of layer `layer` among `files` (GDAL's list of a dataset's
    /// files: a layer is the .shp, .shx and .dbf named like it); nil when its
    /// .shx is not among them or cannot be read (GDAL then reports its own error).
    static func read(layer: String, files: [String]) -> ShapefileCounts? {
        func file(_ ext: String) -> String? {
            files.first { path in
                let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
                return name.count == layer.count + 4 && name.hasPrefix(layer) && name.lowercased().hasSuffix("." + ext)
            }
        }
        guard let shx = file("shx"), let index = header(of: shx, count: 100) else { return nil }
        // .shx: the file's length in 16-bit words, big-endian, at byte 24; then 8 bytes a shape.
        let words = index[24..<28].reduce(0) { $0 << 8 | Int($1) }
        var counts = ShapefileCounts(shapes: max(0, (words * 2 - 100) / 8))
        guard let dbf = file("dbf"), let table = header(of: dbf, count: 12) else { return counts }
        // .dbf: records (32 bits), header length and record length (16 bits), little-endian, from byte 4.
        let records = table[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) }
        let headerLength = Int(table[8]) | Int(table[9]) << 8, recordLength = Int(table[10]) | Int(table[11]) << 8
        counts.records = records
        counts.deleted = deletedRecords(dbf, records: records, headerLength: headerLength, recordLength: recordLength)
        return counts
    }

    /// The refusal when shapes and records do not pair up, or nil.
    func mismatch(layer: String) -> String? {
        guard let records, records != shapes else { return nil }
        return "layer \(Echo.name(layer)): its .shx lists \(shapes) shapes but its .dbf holds \(records) records; "
            + "a Shapefile pairs them by position, so one of its files is cut short or from another version of the data"
    }

    /// How many features GDAL gives for the whole layer: its records less the deleted ones.
    var features: Int { (records ?? shapes) - deleted }

    /// The first `count` bytes of the file at `path`, nil when it has fewer.
    private static func header(of path: String, count: Int) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var bytes = [UInt8](repeating: 0, count: count)
        return fread(&bytes, 1, count, f) == count ? bytes : nil
    }

    /// How many records of the .dbf at `path` start with the deletion mark
    /// `*`, reading the file in blocks of whole records.
    private static func deletedRecords(_ path: String, records: Int, headerLength: Int, recordLength: Int) -> Int {
        guard recordLength > 0, let f = fopen(path, "rb"), fseek(f, headerLength, SEEK_SET) == 0 else { return 0 }
        defer { fclose(f) }
        let perBlock = max(1, (1 << 20) / recordLength)
        var block = [UInt8](repeating: 0, count: perBlock * recordLength)
        var left = records, deleted = 0
        while left > 0 {
            let n = fread(&block, recordLength, min(left, perBlock), f)
            if n == 0 { break }
            for r in 0..<n where block[r * recordLength] == UInt8(ascii: "*") { deleted += 1 }
            left -= n
        }
        return deleted
    }
}
