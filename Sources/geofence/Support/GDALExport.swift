import GeofenceCore
import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Writes the areas in any vector format a GDAL driver creates (GeoPackage,
/// FlatGeobuf, Shapefile, GML, KML, SQLite, …): the engine's GeoJSON, with
/// shortest round-trip digits so every double arrives exactly, handed to
/// GDAL's ogr2ogr.
///
/// The guarantees of every output file hold here too: ogr2ogr writes in a
/// temporary folder beside --out, and what it made is renamed into place only
/// when complete, so a failure (a full disk, a driver that refuses a value)
/// leaves the old file or none. A format of several files (a Shapefile's
/// .shp, .shx, .dbf, .prj, .cpg) has each renamed to --out's stem, the file
/// --out names last. No file may be the catalog or its journal, and every
/// path handed to ogr2ogr starts with `/` or `./`, so none is read as an option.
struct GDALExport {
    /// The driver's short name as GDAL spells it.
    let driver: String
    /// What the driver writes, for messages: its long name (GeoPackage, ESRI Shapefile).
    let kind: String
    /// --out, as the user gave it.
    let out: String

    /// The writer of `format` to `out`; throws when GDAL has no driver of that
    /// name, or one that cannot create vector files, saying how to list them.
    init(format: ExportFormat, out: String) throws {
        let gdal: GDALLibrary
        do { gdal = try GDALLibrary.shared() } catch {
            throw InputError("writing \(format.optionText) needs GDAL (its ogr2ogr and libgdal), which is not installed "
                             + "(Debian: apt-get install gdal-bin)", file: out)
        }
        let list = "ogrinfo --formats lists the vector formats this GDAL has; those marked w (or rw) can be written"
        guard let handle = gdal.driverByName(format.rawValue),
              gdal.metadataItem(handle, "DCAP_VECTOR", nil).map({ String(cString: $0) }) == "YES" else {
            throw InputError("GDAL has no vector format named \(Echo.name(format.rawValue)): \(list)", field: "--format")
        }
        guard gdal.metadataItem(handle, "DCAP_CREATE", nil).map({ String(cString: $0) }) == "YES" else {
            throw InputError("GDAL reads \(format.optionText) but cannot create such files: \(list)", field: "--format")
        }
        driver = GDALLibrary.string(gdal.driverShortName(handle))
        kind = gdal.metadataItem(handle, "DMD_LONGNAME", nil).map { String(cString: $0) } ?? driver
        self.out = try Self.followingLinks(out)
    }

    /// `out`, or the file a symbolic link `out` names: the file is written
    /// beside its final name and renamed over it, which over a link would
    /// replace the link and leave the file it names as it was (and, for
    /// /dev/stdout, replace a device's name). A link to nothing, or to a
    /// device or a descriptor (/dev, /proc), is refused: GDAL writes a file
    /// by its name, not a stream.
    static func followingLinks(_ out: String) throws -> String {
        func isStream(_ path: String) -> Bool { ["/dev", "/proc"].contains { path == $0 || path.hasPrefix($0 + "/") } }
        let refusal = "GDAL writes a file by its name, not to a device or a descriptor: name a file"
        if isStream(out) { throw InputError(refusal, file: out) }
        var st = stat()
        guard lstat(out, &st) == 0, (st.st_mode & S_IFMT) == S_IFLNK else { return out }
        var link = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        if readlink(out, &link, link.count - 1) > 0, isStream(String(cString: link)) {
            throw InputError("it is a link to \(String(cString: link)); \(refusal)", file: out)
        }
        guard let resolved = realpath(out, nil) else {
            throw InputError("it is a link to nothing (\(String(cString: strerror(errno)))): name the file to write itself", file: out)
        }
        defer { free(resolved) }
        let target = String(cString: resolved)
        if isStream(target) { throw InputError("it names \(target); \(refusal)", file: out) }
        return target
    }

    /// The stem and extension of `out`'s last component: `a/b.shp` → (`a/b`, `.shp`).
    var stemAndExtension: (stem: String, ext: String) {
        guard let ext = OutputFormatNames<ExportFormat>.fileExtension(out) else { return (out, "") }
        // The extension as the user wrote it (fileExtension lowers its case).
        return (String(out.dropLast(ext.count + 1)), String(out.suffix(ext.count + 1)))
    }

    /// Writes `geojson` (a FeatureCollection) as layer `areas`, promoting
    /// polygons to multipolygons when `promoteToMulti`. When ogr2ogr fails on
    /// a file system left with less free space than the GeoJSON took (and at
    /// least 1 MiB), the error says the disk is full. Times stay strings
    /// (`DATE_AS_STRING`): a GeoPackage DateTime keeps only milliseconds.
    func write(_ geojson: String, database: Connection, promoteToMulti: Bool) throws {
        let (stem, ext) = stemAndExtension
        let shapefile = driver == "ESRI Shapefile"
        if shapefile && ext != ".shp" {
            throw InputError("a Shapefile is written as NAME.shp with its .shx, .dbf, .prj and .cpg beside it, in lower case as GDAL "
                             + "names them: name it NAME.shp", file: out)
        }
        var st = stat()
        if stat(out, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
            throw InputError("a \(kind) is written as a regular file; this is not one", file: out)
        }
        let base = out.hasPrefix("/") ? out : "./" + out
        var template = Array((base + ".partial-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw InputError("cannot create a temporary folder beside it: \(String(cString: strerror(errno)))", file: out)
        }
        let folder = String(cString: made)
        defer { Self.removeAll(in: folder); rmdir(folder) }
        let source = folder + "/input.geojson", target = folder + "/areas" + ext
        try Self.writeText(geojson, to: source, out: out)
        var arguments = ["ogr2ogr", "-f", driver, target, source, "-nln", "areas", "-oo", "DATE_AS_STRING=YES"]
        if promoteToMulti { arguments += ["-nlt", "PROMOTE_TO_MULTI"] }
        // A Shapefile's text is Latin-1 unless its .cpg says otherwise: names in any script need UTF-8.
        if shapefile { arguments += ["-lco", "ENCODING=UTF-8"] }
        // GDAL's CSV holds no geometry unless told to write it, as WKT (of 15 digits: a table to read, not a catalog).
        if driver == "CSV" { arguments += ["-lco", "GEOMETRY=AS_WKT"] }
        try run(arguments, folder: folder, inputSize: geojson.utf8.count)
        unlink(source)
        // Every file the driver made, renamed to --out's stem; --out itself last.
        let outputs = Self.entries(of: folder).filter { $0.hasPrefix("areas") }
        guard outputs.contains("areas" + ext) else {
            throw InputError("ogr2ogr's \(driver) made no file areas\(ext) (it made \(outputs.isEmpty ? "nothing" : outputs.joined(separator: ", ")))", file: out)
        }
        var moves = outputs.map { (from: folder + "/" + $0, to: stem + $0.dropFirst("areas".count)) }
        moves.sort { ($0.to == out ? 1 : 0) < ($1.to == out ? 1 : 0) }
        for move in moves {
            if stat(move.from, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
                throw InputError("ogr2ogr's \(driver) made a folder, \(Echo.name(String(move.from.dropFirst(folder.count + 1)))), "
                                 + "where export expects files", file: out)
            }
            try OutputFile(move.to, database: database).discard()   // never the catalog or its journal, under any name
        }
        for move in moves {
            guard rename(move.from, move.to) == 0 else {
                throw InputError("cannot rename the finished file into place: \(String(cString: strerror(errno)))", file: move.to)
            }
        }
    }

    /// Runs ogr2ogr; throws its failure in the user's terms (a full disk first).
    private func run(_ arguments: [String], folder: String, inputSize: Int) throws {
        let child: Subprocess
        do { child = try Subprocess(arguments) } catch let e as Subprocess.SpawnError {
            throw InputError(e.code == ENOENT ? "writing \(driver) needs GDAL's ogr2ogr, which is not installed (Debian: apt-get install gdal-bin)"
                                              : "cannot start ogr2ogr: \(String(cString: strerror(e.code)))", file: out)
        }
        let status = child.wait()
        guard status == 0 else {
            // Asked before the partial files are removed: a full disk is the
            // cause to name, not the cascade of errors it makes in ogr2ogr.
            if let free = Self.freeBytes(folder), free < max(UInt64(inputSize), 1 << 20) {
                var st = stat()
                let kept = stat(out, &st) == 0 ? "; the file already there is unchanged" : ""
                throw InputError("no space left on device: ogr2ogr could not write the \(kind), and the file system it goes to "
                                 + "has only \(free) bytes free\(kept)", file: out)
            }
            let message = child.gdalMessage
            throw InputError("ogr2ogr could not write the \(kind) (\(child.ending))" + (message.isEmpty ? "" : ": " + message), file: out)
        }
    }

    /// Writes `text`, the GeoJSON ogr2ogr reads, to `path` beside `out`, checking every step.
    private static func writeText(_ text: String, to path: String, out: String) throws {
        func failure() -> InputError {
            var st = stat()
            let kept = stat(out, &st) == 0 ? "; the file already there is unchanged" : ""
            if errno == ENOSPC {
                return InputError("no space left on device for the GeoJSON ogr2ogr reads, written beside it\(kept)", file: out)
            }
            return InputError("cannot write the GeoJSON ogr2ogr reads, beside it: \(String(cString: strerror(errno)))\(kept)", file: out)
        }
        guard let f = fopen(path, "wb") else { throw failure() }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
        let closed = fclose(f) == 0
        guard closed, written == bytes.count else { throw failure() }
    }

    /// The names in `folder` (not `.` and `..`).
    private static func entries(of folder: String) -> [String] {
        guard let dir = opendir(folder) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes what the driver left in `folder`: files, and any folders it
    /// made, however deep (a tile format writes a tree of them).
    private static func removeAll(in folder: String) {
        for name in entries(of: folder) {
            let path = folder + "/" + name
            if unlink(path) != 0 {
                removeAll(in: path)
                rmdir(path)
            }
        }
    }

    /// The bytes free to this user on the file system holding `path`, nil when it cannot be asked.
    private static func freeBytes(_ path: String) -> UInt64? {
        var fs = statvfs()
        guard statvfs(path, &fs) == 0 else { return nil }
        return UInt64(fs.f_bavail) * UInt64(fs.f_frsize)
    }
}
