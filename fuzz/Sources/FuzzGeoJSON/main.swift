// libFuzzer harness: the streaming GeoJSON reader and the area builder.
// The first input byte picks the chunk size the reader is fed with (1–16
// bytes, or all at once), so token boundaries falling between chunks get
// exercised too. Every feature the reader yields goes through the same steps
// as `geofence import`: field extraction, validation, shape preparation, and
// one containment and distance query at the shape's centre.
import FuzzMain
import Glibc
import GeofenceCore

func fuzzGeoJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let chunk = Int(data[0] % 17)
    var offset = 0
    let json = JSONReader(chunks: {
        guard offset < bytes.count else { return nil }
        let n = chunk == 0 ? bytes.count : min(chunk, bytes.count - offset)
        defer { offset += n }
        return Array(bytes[offset..<(offset + n)])
    })
    var reader = FeatureCollectionReader(json)
    while true {
        guard let feature = try? reader.next() else { break }
        guard let area = try? GeoJSONArea.area(from: feature), (try? area.validate()) != nil else { continue }
        let shape = PreparedShape(area.shape)
        let b = shape.boundingBox
        let probe = LonLat(lon: (b.minLon + b.maxLon) / 2, lat: (b.minLat + b.maxLat) / 2)
        _ = shape.contains(probe)
        _ = shape.signedDistance(probe)
        _ = JSONValue.object(area.properties).serialized
    }
    return 0
}

runFuzzer(fuzzGeoJSON)
