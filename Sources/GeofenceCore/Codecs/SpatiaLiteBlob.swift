/// The SpatiaLite BLOB-Geometry format, read and written in pure Swift.
///
/// Layout: 0x00, byte order (0x01 little / 0x00 big endian), SRID (int32),
/// MBR (4 doubles: minX minY maxX maxY), 0x7C, class (int32), body, 0xFE.
/// Collections prefix every member with 0x69 and its class. Classes: 3
/// Polygon, 6 MultiPolygon (+1000 Z, +2000 M, +3000 ZM; +1000000 compressed,
/// where the inner vertices of each ring are float32 deltas from the vertex
/// before, and M, if present, stays a double). Only the XY part is kept.
/// Anything else (points, lines, truncated or trailing bytes) is an error
/// that says what was wrong and at which byte.
public enum SpatiaLiteBlob {
    public struct DecodeError: Error, Equatable, CustomStringConvertible {
        public var message: String
        public var offset: Int
        public var description: String { "\(message) (at byte \(offset))" }
    }

    /// A decoded areal geometry: its SRID and polygons.
    public struct Areal: Equatable {
        public var srid: Int32
        public var polygons: [Polygon]
    }

    public static func isSpatiaLiteBlob(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 45 && bytes[0] == 0x00 && (bytes[1] == 0 || bytes[1] == 1) && bytes[38] == 0x7C
            && bytes[bytes.count - 1] == 0xFE
    }

    public static func decodeAreal(_ bytes: UnsafeRawBufferPointer) throws -> Areal {
        var r = Reader(bytes: bytes)
        let (srid, cls) = try readHeader(&r, atLeast: 44, "geometry")
        var polygons: [Polygon] = []
        switch cls % 1000 {
        case 3:
            polygons = [try readPolygon(&r, cls)]
        case 6:
            // A member is at least its marker, class and ring count.
            let n = try r.count(of: "polygons", bytesEach: 9)
            polygons.reserveCapacity(n)
            for _ in 0..<n {
                let at = r.offset
                guard try r.byte() == 0x69 else { throw DecodeError(message: "missing collection entity marker 0x69", offset: at) }
                let inner = try r.int32()
                guard inner % 1000 == 3 else { throw DecodeError(message: "MultiPolygon member of class \(inner) is not a Polygon", offset: at + 1) }
                polygons.append(try readPolygon(&r, inner))
            }
        default:
            throw DecodeError(message: "geometry class \(cls) is not a Polygon or MultiPolygon", offset: 39)
        }
        guard try r.byte() == 0xFE else { throw DecodeError(message: "missing end marker 0xFE", offset: r.offset - 1) }
        guard r.offset == bytes.count else { throw DecodeError(message: "\(bytes.count - r.offset) trailing bytes after the geometry", offset: r.offset) }
        return Areal(srid: srid, polygons: polygons)
    }

    /// A POINT geometry (class 1, or 1001/2001/3001 with Z and M, which are
    /// dropped): its SRID and position, for the functions' point forms
    /// (`MakePoint(lon, lat, 4326)`). Any other class is an error.
    public static func decodePoint(_ bytes: UnsafeRawBufferPointer) throws -> (srid: Int32, point: LonLat) {
        var r = Reader(bytes: bytes)
        let (srid, cls) = try readHeader(&r, atLeast: 60, "point")
        guard [1, 1001, 2001, 3001].contains(cls) else {
            throw DecodeError(message: "geometry class \(cls) is not a Point", offset: 39)
        }
        let x = try r.double(), y = try r.double()
        if cls != 1 { _ = try r.double() }
        if cls == 3001 { _ = try r.double() }
        guard x.isFinite, y.isFinite, abs(x) <= 180, abs(y) <= 90 else {
            throw DecodeError(message: "point (\(x), \(y)) is not a longitude/latitude", offset: 43)
        }
        guard try r.byte() == 0xFE else { throw DecodeError(message: "missing end marker 0xFE", offset: r.offset - 1) }
        guard r.offset == bytes.count else { throw DecodeError(message: "\(bytes.count - r.offset) trailing bytes after the geometry", offset: r.offset) }
        return (srid, LonLat(lon: x, lat: y))
    }

    /// The start every geometry BLOB shares: 0x00, byte order, SRID, MBR,
    /// 0x7C, class. Returns the SRID and the class, `r` just after them.
    private static func readHeader(_ r: inout Reader, atLeast minimum: Int, _ what: String) throws -> (srid: Int32, cls: Int32) {
        guard r.bytes.count >= minimum else {
            throw DecodeError(message: "BLOB too short for a SpatiaLite \(what) (\(r.bytes.count) bytes)", offset: 0)
        }
        guard try r.byte() == 0x00 else { throw DecodeError(message: "not a SpatiaLite geometry BLOB: first byte is not 0x00", offset: 0) }
        let order = try r.byte()
        guard order == 0 || order == 1 else { throw DecodeError(message: "bad byte-order marker \(order)", offset: 1) }
        r.little = order == 1
        let srid = try r.int32()
        for _ in 0..<4 { _ = try r.double() }
        guard try r.byte() == 0x7C else { throw DecodeError(message: "missing MBR end marker 0x7C", offset: 38) }
        return (srid, try r.int32())
    }

    private static func readPolygon(_ r: inout Reader, _ cls: Int32) throws -> Polygon {
        let compressed = cls >= 1_000_000
        let dims = Int(cls % 1_000_000 / 1000)  // 0 XY, 1 XYZ, 2 XYM, 3 XYZM
        guard (0...3).contains(dims), cls % 1000 == 3, cls < 1_004_000 else {
            throw DecodeError(message: "unsupported polygon class \(cls)", offset: r.offset - 4)
        }
        let hasZ = dims == 1 || dims == 3, hasM = dims == 2 || dims == 3
        let ringCount = try r.count(of: "rings", bytesEach: 4)
        var rings: [Ring] = []
        rings.reserveCapacity(ringCount)
        for _ in 0..<ringCount {
            let n = try r.count(of: "vertices in a ring", bytesEach: compressed ? 8 : 16)
            var pts: [LonLat] = []
            pts.reserveCapacity(n)
            var x = 0.0, y = 0.0
            for v in 0..<n {
                if !compressed || v == 0 || v == n - 1 {
                    x = try r.double(); y = try r.double()
                    if hasZ { _ = try r.double() }
                    if hasM { _ = try r.double() }
                } else {
                    x += Double(try r.float()); y += Double(try r.float())
                    if hasZ { _ = try r.float() }
                    if hasM { _ = try r.double() }
                }
                // Lon/lat only: a NaN, an infinity or a projected coordinate would
                // make every later answer meaningless.
                guard x.isFinite, y.isFinite, abs(x) <= 180, abs(y) <= 90 else {
                    throw DecodeError(message: "vertex \(v) (\(x), \(y)) is not a longitude/latitude", offset: r.offset - 16)
                }
                pts.append(LonLat(lon: x, lat: y))
            }
            rings.append(Ring(pts))
        }
        return Polygon(rings)
    }

    /// Encodes polygons as an uncompressed XY MultiPolygon (class 6), the form
    /// a MULTIPOLYGON geometry column stores, every coordinate exactly
    /// (a circle's derived 32-gon may be compressed: SpatiaLiteBlob+Compressed).
    public static func encodeMultiPolygon(_ polygons: [Polygon], srid: Int32 = 4326) -> [UInt8] {
        var w = Writer()
        var box = BoundingBox.empty
        for p in polygons { for ring in p.rings { for pt in ring.points { box.add(pt) } } }
        w.byte(0x00); w.byte(0x01); w.int32(srid)
        w.double(box.minLon); w.double(box.minLat); w.double(box.maxLon); w.double(box.maxLat)
        w.byte(0x7C); w.int32(6); w.int32(Int32(polygons.count))
        for p in polygons {
            w.byte(0x69); w.int32(3); w.int32(Int32(p.rings.count))
            for ring in p.rings {
                w.int32(Int32(ring.points.count))
                for pt in ring.points { w.double(pt.lon); w.double(pt.lat) }
            }
        }
        w.byte(0xFE)
        return w.bytes
    }

    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        var little = true
        var remaining: Int { bytes.count - offset }

        mutating func need(_ n: Int) throws {
            guard offset + n <= bytes.count else {
                throw DecodeError(message: "truncated BLOB: needed \(n) more bytes, \(remaining) left", offset: offset)
            }
        }
        mutating func byte() throws -> UInt8 { try need(1); defer { offset += 1 }; return bytes[offset] }
        mutating func uint32() throws -> UInt32 {
            try need(4)
            let v = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            offset += 4
            return little ? UInt32(littleEndian: v) : UInt32(bigEndian: v)
        }
        mutating func int32() throws -> Int32 { Int32(bitPattern: try uint32()) }
        /// A count of items that take at least `bytesEach` bytes each, refused
        /// if the rest of the BLOB could not hold them, so that no allocation
        /// is ever sized by an unchecked number.
        mutating func count(of what: String, bytesEach: Int) throws -> Int {
            let at = offset
            let v = try int32()
            guard v >= 0 else { throw DecodeError(message: "negative count \(v)", offset: at) }
            guard Int(v) <= remaining / bytesEach else {
                throw DecodeError(message: "claims \(v) \(what), more than the BLOB holds", offset: at)
            }
            return Int(v)
        }
        mutating func float() throws -> Float { Float(bitPattern: try uint32()) }
        mutating func double() throws -> Double {
            try need(8)
            let v = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
            return Double(bitPattern: little ? UInt64(littleEndian: v) : UInt64(bigEndian: v))
        }
    }

    struct Writer {
        var bytes: [UInt8] = []
        mutating func byte(_ b: UInt8) { bytes.append(b) }
        mutating func int32(_ v: Int32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        mutating func double(_ v: Double) { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        mutating func float(_ v: Float) { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
    }
}
