import XCTest
@testable import GeofenceCore

/// A seeded generator, so a failure can be reproduced.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The pieces behind issue 20's far-field and probability fixes; the
/// references (GeographicLib, grid integrals) are in the integration tests.
final class FarFieldTests: XCTestCase {
    func testSphereBoundsBracketTheEllipsoidalDistance() {
        var rng = SplitMix(seed: 20)
        for _ in 0..<2000 {
            let p = LonLat(lon: .random(in: -180...180, using: &rng), lat: .random(in: -89.9...89.9, using: &rng))
            let q = LonLat(lon: .random(in: -180...180, using: &rng), lat: .random(in: -89.9...89.9, using: &rng))
            guard let exact = Geodesy.vincenty(p, q)?.distance else { continue }
            let b = SphereBounds(FixFrame(p))
            XCTAssertLessThanOrEqual(b.lowerBound(lat1: q.lat, lat2: q.lat, lon1: q.lon, width: 0), exact)
            XCTAssertGreaterThanOrEqual(b.upperBound(lat: q.lat, lon: q.lon), exact)
            // A box holding q is no farther than q.
            XCTAssertLessThanOrEqual(b.lowerBound(lat1: q.lat - 0.5, lat2: q.lat + 0.3, lon1: q.lon - 2, width: 2.5), exact)
        }
    }

    /// The bounds of a nearest-first walk: no point of a box, across ±180° and
    /// near the poles included, is nearer than either bound of the box.
    func testBoxBoundsAreBelowEveryPointOfTheBox() {
        var rng = SplitMix(seed: 21)
        var tight = 0
        for _ in 0..<1500 {
            let p = LonLat(lon: .random(in: -180...180, using: &rng), lat: .random(in: -90...90, using: &rng))
            let w = [0.001, 0.05, 1, 20, 200].randomElement(using: &rng)!, h = [0.001, 0.05, 1, 20, 90].randomElement(using: &rng)!
            let minLon = Double.random(in: -180...(180 - min(w, 360)), using: &rng)
            let minLat = Double.random(in: -90...(90 - min(h, 180)), using: &rng)
            let box = BoundingBox(minLon: minLon, minLat: minLat, maxLon: min(180, minLon + w), maxLat: min(90, minLat + h))
            let bounds = SphereBounds(p)
            let low = bounds.lowerBound(to: box), far = bounds.farLowerBound(to: box)
            var nearest = Double.infinity
            for i in 0...12 {
                for j in 0...12 {
                    let q = LonLat(lon: box.minLon + (box.maxLon - box.minLon) * Double(i) / 12,
                                   lat: box.minLat + (box.maxLat - box.minLat) * Double(j) / 12)
                    guard let d = Geodesy.vincenty(p, q)?.distance else { continue }
                    nearest = min(nearest, d)
                }
            }
            guard nearest.isFinite else { continue }
            XCTAssertLessThanOrEqual(low, nearest, "\(p) \(box)")
            if let far {
                XCTAssertLessThanOrEqual(far, nearest, "\(p) \(box)")
                if w <= 0.05 && h <= 0.05 && nearest > 1_000_000 && far > nearest - 10_000 { tight += 1 }
            }
        }
        XCTAssertGreaterThan(tight, 0)   // the far bound does what it is for
        // A box that is none is never passed over.
        let p = SphereBounds(LonLat(lon: 0, lat: 0))
        XCTAssertEqual(p.lowerBound(to: BoundingBox(minLon: 10, minLat: .nan, maxLon: 11, maxLat: 1)), 0)
        XCTAssertEqual(p.lowerBound(to: BoundingBox(minLon: 11, minLat: 0, maxLon: 10, maxLat: 1)), 0)
        XCTAssertNil(p.farLowerBound(to: BoundingBox(minLon: .nan, minLat: 0, maxLon: 10, maxLat: 1)))
    }

    func testNearlyAntipodalPointsAreMeasuredOnTheEllipsoid() {
        // (0, 0) to (0.5, 179.7): Vincenty does not settle; GeographicLib gives 19,944,127.421 m.
        let p = LonLat(lon: 0, lat: 0), q = LonLat(lon: 179.7, lat: 0.5)
        XCTAssertNil(Geodesy.vincenty(p, q))
        XCTAssertEqual(Geodesy.inverse(p, q).distance, 19_944_127.421, accuracy: 0.03)
    }

    func testInsideProbabilityNextToAnEdgeOfHundredsOfKilometres() {
        // Egypt/Sudan-like: an edge of 4° along 22°N; 2σ inside it at 1 m accuracy.
        let ring = Ring([LonLat(lon: 25, lat: 18), LonLat(lon: 29, lat: 18), LonLat(lon: 29, lat: 22),
                         LonLat(lon: 25, lat: 22), LonLat(lon: 25, lat: 18)])
        let shape = PreparedShape(.polygons([Polygon([ring])]))
        let sigma = CEP.sigma(forAccuracy: 1)
        let lat = 22 - 2 * sigma / WGS84.metresPerDegree(atLat: 22).lat
        let p = InsideProbability.of(shape, at: LonLat(lon: 27, lat: lat), accuracy: 1)
        XCTAssertEqual(p, 0.97725, accuracy: 0.001)   // Φ(2)
    }

    func testLeapSecondOnlyAtTheEndOfAMonth() throws {
        XCTAssertEqual(try Timestamp.parse("2016-12-31T23:59:60Z"), try Timestamp.parse("2016-12-31T23:59:59Z"))
        XCTAssertEqual(try Timestamp.parse("2017-01-01T08:59:60.25+09:00"), try Timestamp.parse("2016-12-31T23:59:59.25Z"))
        XCTAssertThrowsError(try Timestamp.parse("2026-11-25T12:00:60Z")) { error in
            XCTAssertEqual(error as? Timestamp.ParseError, .notLeapSecond("2026-11-25T12:00:60Z"))
        }
    }

    func testGroupIdsAsWrittenAndNeverDoubled() throws {
        func id(_ props: String) throws -> String {
            let text = #"{"type":"Feature","properties":{"radius_m":10,"# + props + #"},"geometry":{"type":"Point","coordinates":[139.7,35.6]}}"#
            return try GeoJSONArea.area(from: JSONReader.parse(text)).areaId
        }
        XCTAssertEqual(try id(#""area_id":"G#A","group_id":"G""#), "G#A")
        XCTAssertEqual(try id(#""area_id":"A","group_id":"G""#), "G#A")
        XCTAssertEqual(try id(#""area_id":7,"group_id":42"#), "42#7")
        XCTAssertEqual(try id(#""area_id":"H#A","group_id":"G""#), "G#H#A")
        XCTAssertThrowsError(try id(#""area_id":"A","group_id":true"#))
    }
}
