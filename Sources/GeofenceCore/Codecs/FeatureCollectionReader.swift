/// Streams the features of a GeoJSON FeatureCollection one at a time, so a
/// file of a million features never has to be in memory at once. Members
/// other than `features` (e.g. `updated_at`) are collected as they pass and
/// are complete once `next()` has returned nil.
///
/// Or of a GeoJSON sequence (`init(sequence:)`): GDAL's GeoJSONSeq and
/// RFC 8142, one Feature per line, each line optionally opened by a record
/// separator (0x1E). Read here rather than through GDAL, so that its
/// records get the same checks as a collection's features (GDAL keeps the
/// last of two members of one name, which this reader refuses).
public struct FeatureCollectionReader {
    private var json: JSONReader
    private enum Phase { case start, members, features(first: Bool), sequence, done }
    private var phase = Phase.start

    /// The file names read as GeoJSON sequences (GDAL's GeoJSONSeq names, and newline-delimited JSON's).
    public static func namesSequence(_ path: String) -> Bool {
        let lower = path.lowercased()
        return [".geojsonl", ".geojsons", ".geojsonseq", ".ndjson", ".jsonl", ".ldjson"].contains { lower.hasSuffix($0) }
    }

    public init(sequence json: JSONReader) { self.json = json; phase = .sequence }
    private var sawType = false
    public private(set) var foreignMembers: [(String, JSONValue)] = []
    public private(set) var featureIndex = -1
    private var seenMembers = Set<[UInt8]>()

    public init(_ json: JSONReader) { self.json = json }

    public var line: Int { json.line }

    /// The next feature, or nil at the end of the collection.
    public mutating func next() throws -> JSONValue? {
        while true {
            switch phase {
            case .done:
                return nil
            case .start:
                try json.skipByteOrderMark()
                try json.skipWhitespace()
                guard try json.consume("{") else { throw json.error("a FeatureCollection must be a JSON object") }
                if try json.consume("}") { throw json.error("empty object: not a FeatureCollection") }
                try readMemberName()
            case .features(let first):
                if try json.consume("]") {
                    phase = .members
                    if try json.consume(",") { try readMemberName() } else { try finish(); return nil }
                    continue
                }
                if !first { try json.expect(",") }
                phase = .features(first: false)
                featureIndex += 1
                return try checkedCRS(json.readValue(depth: 2))
            case .members:
                if try json.consume(",") { try readMemberName() } else { try finish(); return nil }
            case .sequence:
                return try nextRecord()
            }
        }
    }

    /// A sequence's next record: one JSON value, alone on its line(s).
    private mutating func nextRecord() throws -> JSONValue? {
        try json.skipByteOrderMark()
        let separated = try json.skipRecordSeparation()
        if try json.atEnd() {
            // An empty file is more likely a failed export than a catalog of nothing (which --replace would make).
            if featureIndex < 0 { throw InputError("an empty GeoJSON sequence: no Feature to import") }
            phase = .done
            return nil
        }
        if featureIndex >= 0 && !separated {
            throw json.error("a second record on the line of the one before: a GeoJSON sequence has one Feature a line")
        }
        featureIndex += 1
        return try checkedCRS(json.readValue(depth: 1))
    }

    /// Reads `"name":` and either enters the features array or reads the member.
    private mutating func readMemberName() throws {
        try json.skipWhitespace()
        let (nameLine, nameColumn) = (json.line, json.column)
        guard case .string(let name) = try json.readValue(depth: 1) else { throw json.error("expected a member name") }
        // A second member of one name is refused, as in every other object.
        guard seenMembers.insert(Array(name.utf8)).inserted else {
            throw JSONSyntaxError(message: "duplicate member name \(Echo.quoted(name)) in one object", line: nameLine, column: nameColumn)
        }
        try json.expect(":")
        if name == "features" {
            guard try json.consume("[") else { throw json.error("\"features\" must be an array") }
            phase = .features(first: true)
            return
        }
        let value = try json.readValue(depth: 1)
        if name == "type" {
            guard value == .string("FeatureCollection") else {
                throw json.error("type is \(Echo.plain(value.serialized)), expected \"FeatureCollection\"")
            }
            sawType = true
        } else {
            if name == "crs" { try Self.checkCRS(value) }
            foreignMembers.append((name, value))
        }
        phase = .members
    }

    /// `feature`, once a `crs` of its own or of its geometry is known to be
    /// WGS 84 longitude/latitude (the 2008 format allowed one at any level,
    /// and a sequence's records are its top-level objects).
    private func checkedCRS(_ feature: JSONValue) throws -> JSONValue {
        for (crs, field) in [(feature["crs"], "crs"), (feature["geometry"]?["crs"], "geometry.crs")] {
            do { if let crs { try Self.checkCRS(crs) } } catch var e as InputError {
                e.field = field
                throw e.located(item: "feature \(featureIndex)")
            }
        }
        return feature
    }

    /// RFC 7946 GeoJSON is WGS 84 longitude/latitude, and has no `crs`; the
    /// 2008 format's `crs` member is still written by older tools. One that
    /// names WGS 84 lon/lat is fine; any other would make every coordinate
    /// mean something else (a Web Mercator square read as degrees), so it is
    /// refused rather than ignored.
    static func checkCRS(_ crs: JSONValue) throws {
        var name = ""
        if case .string(let n)? = crs["properties"]?["name"] { name = n }
        let upper = String(name.uppercased().filter { !$0.isWhitespace })
        let lonLat = ["CRS84", "CRS:84", "EPSG:4326", "EPSG::4326"]
        if crs == .null || lonLat.contains(where: { upper.hasSuffix($0) }) { return }
        throw InputError("\(Echo.plain(crs.serialized)) is not WGS 84 longitude/latitude, which GeoJSON (RFC 7946) always is: "
                         + "convert it to a GeoPackage (ogr2ogr -f GPKG out.gpkg in.geojson) and import that, which reprojects it "
                         + "without rounding (a GeoJSON written by ogr2ogr loses digits)", field: "crs")
    }

    private mutating func finish() throws {
        try json.expect("}")
        guard try json.atEnd() else { throw json.error("trailing characters after the FeatureCollection") }
        guard sawType else { throw json.error("the top-level object has no \"type\": \"FeatureCollection\"") }
        phase = .done
    }
}
