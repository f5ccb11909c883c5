import XCTest
@testable import GeofenceCore

/// The exact boundary: points on edges and vertices are outside whatever
/// the edge's direction; both spellings of ±180 agree; polar edges and the
/// matched cut at ±180 are not boundary, unmatched seam pieces are.
final class BoundaryTests: XCTestCase {
    func testOrientationIsExactOnAndNextToALine() {
        var r = ChordTests.Random(state: 9)
        var onLine = 0
        for _ in 0..<20_000 {
            let ax = r.range(-180, 180), ay = r.range(-90, 90)
            let bx = ax + r.range(-3, 3), by = ay + r.range(-3, 3)
            // The midpoint, when its coordinates are exact sums, is on the segment.
            let mx = (ax + bx) / 2, my = (ay + by) / 2
            guard mx * 2 - ax == bx, my * 2 - ay == by, mx - ax == (bx - ax) / 2, my - ay == (by - ay) / 2 else { continue }
            onLine += 1
            XCTAssertEqual(Orientation.sign(ax, ay, bx, by, mx, my), 0)
            // One ulp north is left of an edge going east, right of one going west.
            let up = Orientation.sign(ax, ay, bx, by, mx, my.nextUp)
            XCTAssertEqual(up, bx > ax ? 1 : (bx < ax ? -1 : up))
            XCTAssertEqual(Orientation.sign(ax, ay, bx, by, mx, my.nextDown), -up)
        }
        XCTAssertGreaterThan(onLine, 1_000)
    }

    func testVerticesAndEdgesAreBoundaryInBothHolders() {
        // A square with a hole, each ring walked both ways round.
        for reversed in [false, true] {
            func ring(_ pts: [(Double, Double)]) -> Ring {
                let ps = pts.map { LonLat(lon: $0.0, lat: $0.1) }
                return Ring(reversed ? ps.reversed() : ps)
            }
            let outer = ring([(10, 10), (12, 10), (12.5, 11.25), (12, 12), (10, 12), (10, 10)])
            let hole = ring([(10.5, 10.5), (11.5, 10.5), (11.5, 11.5), (10.5, 11.5), (10.5, 10.5)])
            let polygons = [Polygon([outer, hole])]
            let prepared = PreparedShape(.polygons(polygons))
            SpatiaLiteBlob.encodeMultiPolygon(polygons).withUnsafeBytes { bytes in
                let flat = UnpreparedPolygons(SpatiaLiteBlob.FlatView(bytes, maxVertices: 64)!)
                var points: [LonLat] = []
                for ring in [outer, hole] {
                    points += ring.points
                    for (a, b) in zip(ring.points, ring.points.dropFirst()) {
                        points.append(LonLat(lon: (a.lon + b.lon) / 2, lat: (a.lat + b.lat) / 2))
                    }
                }
                points.append(LonLat(lon: 12.25, lat: 10.625))  // on the slanted edge, a quarter of the way
                for p in points {
                    for shape in [prepared as any AreaGeometry, flat as any AreaGeometry] {
                        XCTAssertEqual(shape.location(of: p), .boundary, "\(p)")
                        XCTAssertFalse(shape.contains(p))
                        XCTAssertEqual(shape.signedDistance(p), 0)
                        XCTAssertEqual(VerdictRule().verdict(shape, at: p, accuracy: 0), .outside)
                        XCTAssertEqual(VerdictRule(confidence: 0.9).verdict(shape, at: p, accuracy: 5), .undecided)
                    }
                    XCTAssertEqual(UnpreparedPolygons.signedDistance(blob: bytes, maxVertices: 64, from: FixFrame(p)), 0)
                }
                for p in [LonLat(lon: 10.25, lat: 11), LonLat(lon: 12.1, lat: 11.25)] {
                    XCTAssertEqual(prepared.location(of: p), .inside)
                    XCTAssertEqual(flat.location(of: p), .inside)
                }
                XCTAssertEqual(prepared.location(of: LonLat(lon: 11, lat: 11)), .outside)
            }
        }
    }

    func testSeamPiecesWithoutAPartnerAreBoundary() {
        func ring(_ pts: [(Double, Double)]) -> Polygon { Polygon([Ring(pts.map { LonLat(lon: $0.0, lat: $0.1) })]) }
        let east = ring([(170, 0), (180, 0), (180, 10), (170, 10), (170, 0)])
        let west = ring([(-180, 2), (-170, 2), (-170, 8), (-180, 8), (-180, 2)])
        let seam = AntimeridianSeam([east, west])
        let pieces = seam.pieces(LonLat(lon: 180, lat: 0), LonLat(lon: 180, lat: 10))
        XCTAssertEqual(pieces.map { [$0.a.lat, $0.b.lat] }, [[0, 2], [2, 8], [8, 10]])
        XCTAssertEqual(pieces.map(\.cut), [false, true, false])
        let down = seam.pieces(LonLat(lon: -180, lat: 8), LonLat(lon: -180, lat: 2))
        XCTAssertEqual(down.map { [$0.a.lat, $0.b.lat] }, [[8, 2]])
        XCTAssertEqual(down.map(\.cut), [true])

        let shape = PreparedShape(.polygons([east, west]))
        for lon in [180.0, -180.0] {
            XCTAssertEqual(shape.location(of: LonLat(lon: lon, lat: 1)), .boundary)
            XCTAssertEqual(shape.location(of: LonLat(lon: lon, lat: 9)), .boundary)
            XCTAssertEqual(shape.location(of: LonLat(lon: lon, lat: 5)), .inside)
            XCTAssertEqual(shape.signedDistance(LonLat(lon: lon, lat: 1)), 0)
        }
        XCTAssertEqual(shape.signedDistance(LonLat(lon: 180, lat: 5)), shape.signedDistance(LonLat(lon: -180, lat: 5)))
        XCTAssertEqual(shape.signedDistance(LonLat(lon: 180, lat: 5)), Geodesy.distance(LonLat(lon: 180, lat: 5), LonLat(lon: 180, lat: 2)),
                       accuracy: 0.01)
    }

    func testPolarEdgesAreNotBoundary() {
        // Antarctica's way: the ring runs down +180 to the pole, along -90, up -180.
        let cap = [Polygon([Ring([(-180, -80), (-180, -90), (180, -90), (180, -80), (0, -80), (-180, -80)].map { LonLat(lon: $0.0, lat: $0.1) })])]
        let prepared = PreparedShape(.polygons(cap))
        let want = Geodesy.distance(LonLat(lon: 0, lat: -90), LonLat(lon: 0, lat: -80))
        for lon in [-180.0, -45.0, 0.0, 90.0, 180.0] {
            let p = LonLat(lon: lon, lat: -90)
            XCTAssertEqual(prepared.location(of: p), .inside)
            XCTAssertEqual(prepared.signedDistance(p), want, accuracy: 0.01)
        }
        // A wedge that ends at the pole has the pole as a vertex: boundary.
        let wedge = [Polygon([Ring([(10, -90), (10, -80), (20, -80), (20, -90), (10, -90)].map { LonLat(lon: $0.0, lat: $0.1) })])]
        let w = PreparedShape(.polygons(wedge))
        for lon in [-100.0, 15.0, 180.0] {
            XCTAssertEqual(w.location(of: LonLat(lon: lon, lat: -90)), .boundary)
            XCTAssertEqual(w.signedDistance(LonLat(lon: lon, lat: -90)), 0)
        }
    }
}
