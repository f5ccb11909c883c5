/// The value of gf_circle(lat, lon, radius_m): a 28-byte BLOB, "GFC1" then the
/// centre latitude, longitude and radius as little-endian doubles. Its first
/// byte is never 0x00, so it cannot be mistaken for a SpatiaLite geometry.
public enum CircleBlob {
    static let magic: [UInt8] = Array("GFC1".utf8)
    public static let size = 28

    public static func encode(_ c: Circle) -> [UInt8] {
        var w = SpatiaLiteBlob.Writer()
        w.bytes = magic
        w.double(c.center.lat); w.double(c.center.lon); w.double(c.radiusM)
        return w.bytes
    }

    public static func isCircle(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count == size && bytes[0] == magic[0] && bytes[1] == magic[1] && bytes[2] == magic[2] && bytes[3] == magic[3]
    }

    public static func decode(_ bytes: UnsafeRawBufferPointer) -> Circle? {
        guard isCircle(bytes) else { return nil }
        var r = SpatiaLiteBlob.Reader(bytes: bytes)
        r.offset = 4
        guard let lat = try? r.double(), let lon = try? r.double(), let radius = try? r.double() else { return nil }
        return Circle(center: LonLat(lon: lon, lat: lat), radiusM: radius)
    }
}
