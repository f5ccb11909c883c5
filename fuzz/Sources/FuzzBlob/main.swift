// libFuzzer harness: the SpatiaLite geometry BLOB reader and the gf_circle
// BLOB, followed by what the SQL functions do with a decoded shape (prepare
// it, then containment, signed distance and inside-probability at a point
// taken from the input's last bytes). Decoded shapes are not validated first,
// exactly as gf_contains(blob, …) receives them from a user's table.
import FuzzMain
import Glibc
import GeofenceCore

func fuzzBlob(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let shape: Shape
    if let c = CircleBlob.decode(bytes) {
        shape = .circle(c)
    } else if let areal = try? SpatiaLiteBlob.decodeAreal(bytes) {
        shape = .polygons(areal.polygons)
    } else {
        if SpatiaLiteBlob.FlatView(bytes, maxVertices: 1 << 20) != nil { fatalError("FlatView accepted a BLOB the decoder refuses") }
        if UnpreparedPolygons.signedDistance(blob: bytes, maxVertices: 1 << 20, from: FixFrame(LonLat(lon: 139.7, lat: 35.7))) != nil {
            fatalError("signedDistance(blob:) answered for a BLOB the decoder refuses")
        }
        return 0
    }
    let prepared = PreparedShape(shape)
    // A probe position from two input bytes, so the fuzzer can steer it.
    let u = size >= 2 ? Double(data[size - 2]) / 255 : 0.5, v = size >= 1 ? Double(data[size - 1]) / 255 : 0.5
    let b = prepared.boundingBox
    var probe = LonLat(lon: b.minLon + (b.maxLon - b.minLon) * u, lat: b.minLat + (b.maxLat - b.minLat) * v)
    if !(probe.lon.isFinite && probe.lat.isFinite) || abs(probe.lat) > 90 || abs(probe.lon) > 180 {
        probe = LonLat(lon: 139.7, lat: 35.7)
    }
    let inside = prepared.contains(probe), signed = prepared.signedDistance(probe)
    _ = InsideProbability.of(prepared, at: probe, accuracy: 25)
    // The in-place reader must accept only what the decoder accepts, and then
    // answer exactly as the prepared shape does.
    if let view = SpatiaLiteBlob.FlatView(bytes, maxVertices: 1 << 20) {
        guard case .polygons = shape else { fatalError("FlatView accepted a circle BLOB") }
        let flat = UnpreparedPolygons(view)
        let d = flat.signedDistance(probe)
        let fromBlob = UnpreparedPolygons.signedDistance(blob: bytes, maxVertices: 1 << 20, from: FixFrame(probe))
        if flat.contains(probe) != inside || !(d == signed || (signed.isNaN && d.isNaN)) || !(fromBlob == d || (d.isNaN && fromBlob?.isNaN == true)) {
            fatalError("FlatView disagrees with PreparedShape at \(probe)")
        }
    }
    return 0
}

runFuzzer(fuzzBlob)
