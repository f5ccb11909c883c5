import GeofenceCore

/// A geometry in ISO Well-Known Binary (what GDAL's `OGR_G_ExportToIsoWkb`
/// writes) as the GeoJSON geometry object ogr2ogr's GeoJSON writer would
/// make of it, but with every coordinate the exact double of the source:
/// each is written as the shortest text that reads back as the same double,
/// so the importer's GeoJSON rules apply to the very values in the file.
///
/// Positions are `[x, y]`, or `[x, y, z]` for a geometry with Z; M values are
/// dropped, as GeoJSON has none. A type GeoJSON does not have (a TIN, a
/// polyhedral surface) keeps its WKB name and no coordinates, so the importer
/// refuses it as no area by that name. The caller refuses arcs, and makes a
/// curve type holding only straight parts linear (the same points).
struct WKBGeometry {
    private let bytes: UnsafeRawBufferPointer
    private var at = 0

    /// Thrown when the bytes end early or name an unknown byte order (GDAL
    /// wrote them, so this is a fault of the library, not of the user's file).
    struct Malformed: Error {}

    /// The GeoJSON geometry the WKB `bytes` hold.
    static func geoJSON(_ bytes: UnsafeRawBufferPointer) throws(Malformed) -> JSONValue {
        var reader = WKBGeometry(bytes: bytes)
        return try reader.geometry()
    }

    private init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    private static let names = [1: "Point", 2: "LineString", 3: "Polygon", 4: "MultiPoint", 5: "MultiLineString",
                                6: "MultiPolygon", 7: "GeometryCollection", 15: "PolyhedralSurface", 16: "TIN", 17: "Triangle"]

    /// How a geometry's numbers are laid out: byte order, and whether its positions carry Z and M.
    private struct Layout { var little: Bool; var hasZ: Bool; var hasM: Bool }

    /// One geometry: byte order, type (ISO: base type + 1000 Z, 2000 M, 3000 ZM), then its parts.
    private mutating func geometry() throws(Malformed) -> JSONValue {
        let order = try byte()
        guard order <= 1 else { throw Malformed() }  // neither 0 (big-endian) nor 1 (little-endian)
        let little = order == 1
        let code = Int(try uint32(little))
        let base = code % 1000, dims = code / 1000
        let layout = Layout(little: little, hasZ: dims == 1 || dims == 3, hasM: dims == 2 || dims == 3)
        let name = Self.names[base] ?? "WKB type \(code)"
        let coordinates: JSONValue
        switch base {
        case 1: coordinates = try position(layout)
        case 2: coordinates = try positions(layout)
        case 3: coordinates = try rings(layout)
        case 4, 5, 6: coordinates = try members(layout, coordinatesOnly: true)
        case 7: return .object([("type", .string(name)), ("geometries", try members(layout, coordinatesOnly: false))])
        default: return .object([("type", .string(name))])
        }
        return .object([("type", .string(name)), ("coordinates", coordinates)])
    }

    /// A collection's member geometries, or for a Multi* type their coordinates.
    private mutating func members(_ layout: Layout, coordinatesOnly: Bool) throws(Malformed) -> JSONValue {
        var items: [JSONValue] = []
        for _ in 0..<(try count(layout)) {
            let g = try geometry()
            items.append(coordinatesOnly ? g["coordinates"] ?? .array([]) : g)
        }
        return .array(items)
    }

    /// A polygon's rings, each a list of positions.
    private mutating func rings(_ layout: Layout) throws(Malformed) -> JSONValue {
        var items: [JSONValue] = []
        for _ in 0..<(try count(layout)) { items.append(try positions(layout)) }
        return .array(items)
    }

    /// A count, then that many positions.
    private mutating func positions(_ layout: Layout) throws(Malformed) -> JSONValue {
        var items: [JSONValue] = []
        let n = try count(layout)
        items.reserveCapacity(n)
        for _ in 0..<n { items.append(try position(layout)) }
        return .array(items)
    }

    /// A count of items; each takes at least 4 bytes, so a count beyond what is left is not believed.
    private mutating func count(_ layout: Layout) throws(Malformed) -> Int {
        let n = Int(try uint32(layout.little))
        guard n <= (bytes.count - at) / 4 else { throw Malformed() }
        return n
    }

    /// `[x, y]` or `[x, y, z]`; an empty point (NaN coordinates) is `[]`.
    private mutating func position(_ layout: Layout) throws(Malformed) -> JSONValue {
        let x = try double(layout.little), y = try double(layout.little)
        let z = layout.hasZ ? try double(layout.little) : nil
        if layout.hasM { _ = try double(layout.little) }
        if x.isNaN && y.isNaN { return .array([]) }
        var p: [JSONValue] = [.number(x.description), .number(y.description)]
        if let z { p.append(.number(z.description)) }
        return .array(p)
    }

    private mutating func byte() throws(Malformed) -> UInt8 {
        guard at < bytes.count else { throw Malformed() }
        defer { at += 1 }
        return bytes[at]
    }

    private mutating func uint32(_ little: Bool) throws(Malformed) -> UInt32 {
        guard at + 4 <= bytes.count else { throw Malformed() }
        let raw = bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)
        at += 4
        return little ? UInt32(littleEndian: raw) : UInt32(bigEndian: raw)
    }

    private mutating func double(_ little: Bool) throws(Malformed) -> Double {
        guard at + 8 <= bytes.count else { throw Malformed() }
        let raw = bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)
        at += 8
        return Double(bitPattern: little ? UInt64(littleEndian: raw) : UInt64(bigEndian: raw))
    }
}
