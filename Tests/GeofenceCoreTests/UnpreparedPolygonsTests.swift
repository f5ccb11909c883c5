import XCTest
@testable import GeofenceCore

/// Small areas answered straight from the BLOB must answer exactly as the
/// prepared shape does, and the in-place reader must take only BLOBs that the
/// decoder reads the same way.
final class UnpreparedPolygonsTests: XCTestCase {
    func testAgreesWithThePreparedShapeBitForBit() {
        var r = ChordTests.Random(state: 5)
        for case_ in 0..<300 {
            let size = r.range(30, 3_000)
            let lat = r.range(-80, 80)
            let m = WGS84.metresPerDegree(atLat: lat)
            // Some end just short of the antimeridian, so that fixes beyond it see edges across it.
            let nearCut = case_ % 7 == 0
            let lon = nearCut ? 180 - 1.05 * size / m.lon : r.range(-175, 175)
            func ring(_ scale: Double, _ n: Int) -> Ring {
                var pts = (0..<n).map { k -> LonLat in
                    let a = 2 * .pi * Double(k) / Double(n), rad = scale * r.range(0.4, 1)
                    return LonLat(lon: lon + rad * cos(a) / m.lon, lat: lat + rad * sin(a) / m.lat)
                }
                pts.append(pts[0])
                return Ring(pts)
            }
            var polygons = [Polygon([ring(size, 3 + case_ % 40), ring(size * 0.3, 5)])]
            if case_ % 3 == 0 && !nearCut { polygons.append(Polygon([ring(size * 0.2, 4)].map { Ring($0.points.map { LonLat(lon: $0.lon + 3 * size / m.lon, lat: $0.lat) }) })) }
            let blob = SpatiaLiteBlob.encodeMultiPolygon(polygons)
            let prepared = PreparedShape(.polygons(polygons))
            blob.withUnsafeBytes { bytes in
                guard let view = SpatiaLiteBlob.FlatView(bytes, maxVertices: 1_000) else { return XCTFail("refused case \(case_)") }
                let flat = UnpreparedPolygons(view)
                for _ in 0..<20 {
                    let off = r.range(0, 2 * size), az = r.range(0, 2 * .pi)
                    var x = lon + off * sin(az) / m.lon
                    if x > 180 { x -= 360 }
                    let p = LonLat(lon: x, lat: lat + off * cos(az) / m.lat)
                    XCTAssertEqual(flat.contains(p), prepared.contains(p))
                    let want = prepared.signedDistance(p)
                    XCTAssertEqual(flat.signedDistance(p), want, "case \(case_) at \(p)")
                    XCTAssertEqual(UnpreparedPolygons.signedDistance(blob: bytes, maxVertices: 1_000, from: FixFrame(p)), want)
                    XCTAssertEqual(flat.boundaryDistance(p), abs(want))
                    let threshold = r.range(0, size)
                    XCTAssertEqual(flat.isAtLeast(threshold, fromBoundary: p), prepared.isAtLeast(threshold, fromBoundary: p))
                }
            }
        }
    }

    /// Edges over half the globe wide, and edges across the fix's own
    /// antimeridian, must be followed from their first end, as prepared.
    func testWideEdgesAndEdgesAcrossTheFixsAntimeridian() {
        func ring(_ pts: [(Double, Double)]) -> [Polygon] { [Polygon([Ring(pts.map { LonLat(lon: $0.0, lat: $0.1) })])] }
        let shapes = [
            ring([(-170, 10), (170, 10), (170, 11), (-170, 11), (-170, 10)]),          // a band 340° wide
            ring([(-175, 0), (-165, 0), (-165, 1), (-175, 1), (-175, 0)]),            // small, far from the fixes below
            ring([(-175, 40), (-100, 40), (-100, 41), (-175, 41), (-175, 40)]),
        ]
        let fixes = [LonLat(lon: 0, lat: 10.5), LonLat(lon: 175, lat: 10.5), LonLat(lon: 10, lat: 0.5), LonLat(lon: 10, lat: 12),
                     LonLat(lon: 5, lat: 0.3), LonLat(lon: 40, lat: 40.5), LonLat(lon: -179.9, lat: 40.2)]
        for polygons in shapes {
            let prepared = PreparedShape(.polygons(polygons))
            SpatiaLiteBlob.encodeMultiPolygon(polygons).withUnsafeBytes { bytes in
                let flat = UnpreparedPolygons(SpatiaLiteBlob.FlatView(bytes, maxVertices: 64)!)
                for p in fixes {
                    let want = prepared.signedDistance(p)
                    XCTAssertEqual(flat.signedDistance(p), want, "\(polygons) at \(p)")
                }
            }
        }
    }

    func testTakesOnlyTheSimpleKind() throws {
        let square = [Polygon([Ring([LonLat(lon: 0, lat: 0), LonLat(lon: 1, lat: 0), LonLat(lon: 1, lat: 1), LonLat(lon: 0, lat: 1), LonLat(lon: 0, lat: 0)])])]
        let blob = SpatiaLiteBlob.encodeMultiPolygon(square)
        func view(_ b: [UInt8], max: Int = 100) -> Bool {
            b.withUnsafeBytes { bytes in
                let taken = SpatiaLiteBlob.FlatView(bytes, maxVertices: max) != nil
                // The distance straight from the BLOB checks the vertices in its
                // own walk (the first probe), or before the folding walk when
                // the first gives up (the second, 180.9° from the square): it
                // must refuse exactly what the view refuses.
                for p in [LonLat(lon: 0.5, lat: 0.5), LonLat(lon: -179.9, lat: 0.5)] {
                    let d = UnpreparedPolygons.signedDistance(blob: bytes, maxVertices: max, from: FixFrame(p))
                    XCTAssertEqual(d != nil, taken, "signedDistance(blob:) at \(p)")
                }
                return taken
            }
        }
        XCTAssertTrue(view(blob))
        XCTAssertFalse(view(blob, max: 4), "more vertices than allowed")
        XCTAssertFalse(view(SpatiaLiteBlob.encodeMultiPolygon(square, srid: 3857)), "other SRIDs are the decoder's to refuse")
        XCTAssertFalse(view(Array(blob.dropLast())), "truncated")
        XCTAssertFalse(view(blob + [0xFE]), "trailing byte")
        var big = blob; big[1] = 0  // claims big-endian
        XCTAssertFalse(view(big))
        var nan = blob; nan.replaceSubrange(60..<68, with: withUnsafeBytes(of: Double.nan) { Array($0) })
        XCTAssertFalse(view(nan), "a NaN vertex")
        XCTAssertThrowsError(try nan.withUnsafeBytes { try SpatiaLiteBlob.decodeAreal($0) })
        // FlatView checks the extremes and a sum, not each vertex: every way
        // a vertex can be out of range, anywhere in the ring, must still tell.
        for (offset, value) in [(68, Double.infinity), (76, -Double.infinity), (100, Double.nan), (92, 180.5), (84, -90.5), (116, 91)] {
            var bad = blob; bad.replaceSubrange(offset..<(offset + 8), with: withUnsafeBytes(of: value) { Array($0) })
            XCTAssertFalse(view(bad), "\(value) at byte \(offset)")
            XCTAssertThrowsError(try bad.withUnsafeBytes { try SpatiaLiteBlob.decodeAreal($0) }, "\(value) at byte \(offset)")
        }
        let edge = [Polygon([Ring([LonLat(lon: 179, lat: -90), LonLat(lon: 180, lat: -90), LonLat(lon: 180, lat: 90), LonLat(lon: 179, lat: -90)])])]
        XCTAssertTrue(view(SpatiaLiteBlob.encodeMultiPolygon(edge)), "±180° and ±90° are in range")
        let cut = [Polygon([Ring([LonLat(lon: 179, lat: 0), LonLat(lon: 180, lat: 0), LonLat(lon: 180, lat: 1), LonLat(lon: 179, lat: 0)])]),
                   Polygon([Ring([LonLat(lon: -180, lat: 0), LonLat(lon: -179, lat: 0), LonLat(lon: -180, lat: 1), LonLat(lon: -180, lat: 0)])])]
        XCTAssertFalse(view(SpatiaLiteBlob.encodeMultiPolygon(cut)), "a shape cut at ±180° needs the prepared form")
        XCTAssertFalse(view(CircleBlob.encode(Circle(center: LonLat(lon: 0, lat: 0), radiusM: 10))))
    }
}
