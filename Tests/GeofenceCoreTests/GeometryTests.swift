import XCTest
@testable import GeofenceCore

final class GeometryTests: XCTestCase {
    func square(_ lon0: Double, _ lat0: Double, _ size: Double) -> Ring {
        Ring([LonLat(lon: lon0, lat: lat0), LonLat(lon: lon0 + size, lat: lat0), LonLat(lon: lon0 + size, lat: lat0 + size),
              LonLat(lon: lon0, lat: lat0 + size), LonLat(lon: lon0, lat: lat0)])
    }

    func testContainmentWithHoleAndMultiPolygon() {
        let donut = Polygon([square(139.0, 35.0, 0.1), square(139.04, 35.04, 0.02)])
        let other = Polygon([square(140.0, 35.0, 0.01)])
        let s = PreparedShape(.polygons([donut, other]))
        XCTAssertTrue(s.contains(LonLat(lon: 139.01, lat: 35.01)))
        XCTAssertFalse(s.contains(LonLat(lon: 139.05, lat: 35.05)), "inside the hole is outside")
        XCTAssertTrue(s.contains(LonLat(lon: 140.005, lat: 35.005)), "second part")
        XCTAssertFalse(s.contains(LonLat(lon: 139.5, lat: 35.05)), "between the parts")
        XCTAssertFalse(s.contains(LonLat(lon: 139.0, lat: 35.05)) && s.contains(LonLat(lon: 139.1, lat: 35.05)))
    }

    func testManyVertexPolygonUsesBandsCorrectly() {
        // A 2,000-vertex circle-like polygon: containment must match the radius test.
        var pts: [LonLat] = []
        for i in 0...2000 {
            let t = 2 * Double.pi * Double(i % 2000) / 2000
            pts.append(LonLat(lon: 10 + 0.1 * cos(t), lat: 50 + 0.1 * sin(t)))
        }
        let s = PreparedShape(.polygons([Polygon([Ring(pts)])]))
        XCTAssertTrue(s.contains(LonLat(lon: 10, lat: 50)))
        XCTAssertTrue(s.contains(LonLat(lon: 10.0999, lat: 50)))
        XCTAssertFalse(s.contains(LonLat(lon: 10.1001, lat: 50)))
        XCTAssertFalse(s.contains(LonLat(lon: 10, lat: 50.1001)))
    }

    func testSignedDistanceToAnEdgeMatchesMeridianArc() {
        // A fix 0.001° of latitude inside the southern edge (a parallel, straight in lon/lat):
        // the distance is that meridian arc, ~110.9 m at 35°N.
        let s = PreparedShape(.polygons([Polygon([square(139.0, 35.0, 0.1)])]))
        let d = s.signedDistance(LonLat(lon: 139.05, lat: 35.001))
        XCTAssertEqual(d, 110.95, accuracy: 0.05)
        let outside = s.signedDistance(LonLat(lon: 139.05, lat: 34.999))
        XCTAssertEqual(outside, -110.95, accuracy: 0.05)
    }

    /// The flat-frame shortcut in circle containment never changes an answer:
    /// it must equal "ellipsoidal distance < radius" everywhere, boundary
    /// neighbourhood included, at every latitude and across the antimeridian.
    func testCircleShortcutAgreesWithTheEllipsoidalDistance() {
        var seed: UInt64 = 17
        func rnd() -> Double { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Double(seed >> 11) / Double(1 << 53) }
        var near = 0
        for lat in [-84.0, -60, -35, 0, 35.7, 60, 75, 84] {
            for lon in [-179.999, 0, 139.7, 179.999] {
                for radius in [5.0, 80, 1000, 20_000, 90_000] {
                    let c = Circle(center: LonLat(lon: lon, lat: lat), radiusM: radius)
                    let m = WGS84.metresPerDegree(atLat: lat)
                    let shape = PreparedShape(.circle(c))
                    for _ in 0..<120 {
                        let a = rnd() * 2 * .pi, f = rnd() < 0.5 ? 0.99 + rnd() * 0.02 : rnd() * 1.6
                        let p = LonLat(lon: Geodesy.wrapDegrees(lon + f * radius * cos(a) / m.lon), lat: max(-90, min(90, lat + f * radius * sin(a) / m.lat)))
                        let exact = Geodesy.distance(c.center, p) < radius
                        XCTAssertEqual(shape.contains(p), exact, "\(c) \(p)")
                        if abs(Geodesy.distance(c.center, p) - radius) < 0.01 * radius { near += 1 }
                    }
                }
            }
        }
        XCTAssertGreaterThan(near, 3000, "many probes land next to the circle")
    }

    func testCircleDistanceIsRadiusMinusGeodesic() {
        let c = Circle(center: LonLat(lon: 139.7454, lat: 35.6586), radiusM: 300)
        let s = PreparedShape(.circle(c))
        XCTAssertEqual(s.signedDistance(c.center), 300, accuracy: 1e-9)
        XCTAssertTrue(s.contains(LonLat(lon: 139.7454, lat: 35.6600)))
        XCTAssertFalse(s.contains(LonLat(lon: 139.7454, lat: 35.6620)))
    }

    func testVincentyKnownDistance() {
        // Flinders Peak to Buninyong (Vincenty's classic test): 54,972.271 m.
        let p = LonLat(lon: 144 + 25 / 60.0 + 29.52440 / 3600, lat: -(37 + 57 / 60.0 + 3.72030 / 3600))
        let q = LonLat(lon: 143 + 55 / 60.0 + 35.38390 / 3600, lat: -(37 + 39 / 60.0 + 10.15610 / 3600))
        XCTAssertEqual(Geodesy.distance(p, q), 54_972.271, accuracy: 0.001)
    }

    func testAntimeridianCutIsNotABoundary() {
        // One area cut at ±180 (RFC 7946 §3.1.9): two parts touching +180 and -180.
        let east = Polygon([Ring([LonLat(lon: 179.5, lat: -17), LonLat(lon: 180, lat: -17), LonLat(lon: 180, lat: -16),
                                  LonLat(lon: 179.5, lat: -16), LonLat(lon: 179.5, lat: -17)])])
        let west = Polygon([Ring([LonLat(lon: -180, lat: -17), LonLat(lon: -179.5, lat: -17), LonLat(lon: -179.5, lat: -16),
                                  LonLat(lon: -180, lat: -16), LonLat(lon: -180, lat: -17)])])
        let s = PreparedShape(.polygons([east, west]))
        let nearCutEast = LonLat(lon: 179.999, lat: -16.5)
        let nearCutWest = LonLat(lon: -179.999, lat: -16.5)
        XCTAssertTrue(s.contains(nearCutEast))
        XCTAssertTrue(s.contains(nearCutWest))
        // The nearest real boundary is the northern or southern edge, ~55 km away, not the cut 100 m away.
        XCTAssertGreaterThan(s.signedDistance(nearCutEast), 50_000)
        XCTAssertGreaterThan(s.signedDistance(nearCutWest), 50_000)
        // And the verdict at CEP95 with 500 m accuracy is inside, not undecided.
        XCTAssertEqual(VerdictRule(confidence: 0.95).verdict(s, at: nearCutEast, accuracy: 500), .inside)
    }

    func testDistanceNearThePole() {
        let cap = Polygon([Ring([LonLat(lon: -180, lat: 89), LonLat(lon: 180, lat: 89), LonLat(lon: 180, lat: 90),
                                 LonLat(lon: -180, lat: 90), LonLat(lon: -180, lat: 89)])])
        let s = PreparedShape(.polygons([cap]))
        let d = s.signedDistance(LonLat(lon: 45, lat: 89.5))
        XCTAssertEqual(d, Geodesy.distance(LonLat(lon: 45, lat: 89.5), LonLat(lon: 45, lat: 89)), accuracy: 0.01)
    }
}

final class VerdictTests: XCTestCase {
    let square = PreparedShape(.polygons([Polygon([Ring([
        LonLat(lon: 0, lat: 0), LonLat(lon: 0.01, lat: 0), LonLat(lon: 0.01, lat: 0.01), LonLat(lon: 0, lat: 0.01), LonLat(lon: 0, lat: 0),
    ])])]))

    func testCEPFactorReproducesHEREsTable() {
        let table: [(Double, Double)] = [(0.50, 0.78), (0.60, 0.90), (0.70, 1.03), (0.80, 1.19), (0.90, 1.42), (0.95, 1.62), (0.99, 2.01)]
        for (p, k) in table { XCTAssertEqual(CEP.factor(p), k, accuracy: 0.005, "CEP\(Int(p * 100))") }
        XCTAssertEqual(CEP.factor(0.68), 1, accuracy: 1e-12)
        XCTAssertEqual(CEP.factor(0), 0)
    }

    func testPlainContainmentWithThresholds() {
        let centre = LonLat(lon: 0.005, lat: 0.005)
        XCTAssertEqual(VerdictRule().verdict(square, at: centre, accuracy: 5000), .inside, "p = 0 ignores accuracy")
        XCTAssertEqual(VerdictRule(inAccuracyMax: 50).verdict(square, at: centre, accuracy: 50), .inside, "equal qualifies")
        XCTAssertEqual(VerdictRule(inAccuracyMax: 50).verdict(square, at: centre, accuracy: 50.1), .undecided)
        XCTAssertEqual(VerdictRule(outAccuracyMax: 10).verdict(square, at: LonLat(lon: 0.02, lat: 0.005), accuracy: 20), .undecided)
        XCTAssertEqual(VerdictRule(inAccuracyMax: 10).verdict(square, at: LonLat(lon: 0.02, lat: 0.005), accuracy: 20), .outside)
    }

    func testCEPScaledVerdictStraddlesTheBoundary() {
        // 100 m inside the western edge (0.0009° of longitude ≈ 100.2 m at the equator).
        let p = LonLat(lon: 0.0009, lat: 0.005)
        let d = square.signedDistance(p)
        XCTAssertEqual(d, 100.19, accuracy: 0.05)
        XCTAssertEqual(VerdictRule(confidence: 0.95).verdict(square, at: p, accuracy: 61), .inside)   // 1.62·61 = 98.8 ≤ d
        XCTAssertEqual(VerdictRule(confidence: 0.95).verdict(square, at: p, accuracy: 63), .undecided) // 102 > d
        let q = LonLat(lon: -0.0009, lat: 0.005)
        XCTAssertEqual(VerdictRule(confidence: 0.95).verdict(square, at: q, accuracy: 61), .outside)
    }

    func testInsideProbability() {
        let centre = LonLat(lon: 0.005, lat: 0.005)
        XCTAssertEqual(InsideProbability.of(square, at: centre, accuracy: 10), 1, accuracy: 1e-6)
        // On the middle of a long edge: half the mass.
        let big = PreparedShape(.polygons([Polygon([Ring([
            LonLat(lon: 0, lat: 0), LonLat(lon: 1, lat: 0), LonLat(lon: 1, lat: 1), LonLat(lon: 0, lat: 1), LonLat(lon: 0, lat: 0),
        ])])]))
        XCTAssertEqual(InsideProbability.of(big, at: LonLat(lon: 0.5, lat: 0), accuracy: 30), 0.5, accuracy: 0.002)
        // At a convex corner: a quarter.
        XCTAssertEqual(InsideProbability.of(big, at: LonLat(lon: 0, lat: 0), accuracy: 30), 0.25, accuracy: 0.002)
        // σ·d from a straight edge: Φ(d/σ). d = σ gives 0.8413.
        let sigma = CEP.sigma(forAccuracy: 30)
        let lonPerMetre = 1 / WGS84.metresPerDegree(atLat: 0.5).lon
        XCTAssertEqual(InsideProbability.of(big, at: LonLat(lon: sigma * lonPerMetre, lat: 0.5), accuracy: 30), 0.8413, accuracy: 0.002)
        // A circle of radius = accuracy centred on the fix holds 68 % by definition of CEP68.
        let c = PreparedShape(.circle(Circle(center: centre, radiusM: 25)))
        XCTAssertEqual(InsideProbability.of(c, at: centre, accuracy: 25), 0.68, accuracy: 0.002)
        XCTAssertEqual(InsideProbability.of(c, at: centre, accuracy: 25 / CEP.factor(0.95)), 0.95, accuracy: 0.002)
    }
}
