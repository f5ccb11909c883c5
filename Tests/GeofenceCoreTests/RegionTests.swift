import XCTest
@testable import GeofenceCore

final class EnclosingCircleTests: XCTestCase {
    func ring(_ pts: [(Double, Double)]) -> Polygon { Polygon([Ring((pts + [pts[0]]).map { LonLat(lon: $0.0, lat: $0.1) })]) }

    /// Every boundary point is inside, and no centre on a fine grid around the
    /// answer does better by more than a centimetre (the brute-force minimax).
    func assertSmallestEnclosing(_ shape: Shape, file: StaticString = #filePath, line: UInt = #line) {
        let c = EnclosingCircle.of(shape)
        guard case .polygons(let polys) = shape else { return }
        let points = EnclosingCircle.boundaryPoints(polys)
        for p in points { XCTAssertLessThanOrEqual(Geodesy.distance(c.center, p), c.radiusM + 1e-6, file: file, line: line) }
        let m = WGS84.metresPerDegree(atLat: c.center.lat)
        var best = Double.infinity
        for i in -20...20 {
            for j in -20...20 {
                let q = LonLat(lon: c.center.lon + Double(i) * 0.5 / m.lon, lat: c.center.lat + Double(j) * 0.5 / m.lat)
                best = min(best, points.reduce(0) { max($0, Geodesy.distance(q, $1)) })
            }
        }
        XCTAssertLessThanOrEqual(c.radiusM, best + 0.01, "a grid centre 0.5 m apart does better", file: file, line: line)
    }

    func testSquaresTrianglesAndHoles() {
        // A 0.01° square in Tokyo: the circle through its corners.
        assertSmallestEnclosing(.polygons([ring([(139.70, 35.60), (139.71, 35.60), (139.71, 35.61), (139.70, 35.61)])]))
        // An obtuse triangle: the longest side is the diameter.
        let obtuse = Shape.polygons([ring([(0, 0), (0.02, 0), (0.01, 0.002)])])
        assertSmallestEnclosing(obtuse)
        let c = EnclosingCircle.of(obtuse)
        XCTAssertEqual(c.radiusM, Geodesy.distance(LonLat(lon: 0, lat: 0), LonLat(lon: 0.02, lat: 0)) / 2, accuracy: 0.05)
        // Holes never widen the circle.
        var holed = ring([(10, 60), (10.02, 60), (10.02, 60.01), (10, 60.01)])
        holed.rings.append(Ring([LonLat(lon: 10.005, lat: 60.002), LonLat(lon: 10.01, lat: 60.002), LonLat(lon: 10.005, lat: 60.006), LonLat(lon: 10.005, lat: 60.002)]))
        XCTAssertEqual(EnclosingCircle.of(.polygons([holed])), EnclosingCircle.of(.polygons([Polygon([holed.rings[0]])])))
    }

    func testGeneratedStarsAtManyLatitudesAndAcrossTheAntimeridian() {
        var seed: UInt64 = 42
        func rnd() -> Double { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Double(seed >> 11) / Double(1 << 53) }
        for lat in [-70.0, -35, 0, 35, 60, 78] {
            for lon in [-179.995, 12.0, 179.995] {
                let n = 5 + Int(rnd() * 40)
                var pts: [LonLat] = []
                for k in 0..<n {
                    let a = Double(k) / Double(n) * 2 * .pi, r = 0.002 + rnd() * 0.01
                    pts.append(LonLat(lon: lon + r * cos(a) / cos(lat * .pi / 180), lat: lat + r * sin(a)))
                }
                pts.append(pts[0])
                // Edges are straight in lon/lat, never wrapped: a star across ±180
                // is written as RFC 7946 says, in two parts cut at the meridian.
                let lons = pts.map(\.lon)
                if lons.allSatisfy({ (-180...180).contains($0) }) {
                    assertSmallestEnclosing(.polygons([Polygon([Ring(pts)])]))
                } else {
                    let east = lons.contains { $0 < -180 } ? pts.map { LonLat(lon: $0.lon + 360, lat: $0.lat) } : pts
                    let west = CircleEnvelope.clip(east, keepingWest: false).map { LonLat(lon: $0.lon - 360, lat: $0.lat) }
                    assertSmallestEnclosing(.polygons([Polygon([Ring(CircleEnvelope.clip(east, keepingWest: true))]), Polygon([Ring(west)])]))
                }
            }
        }
    }

    func testMultiPolygonAndCircle() {
        let two = Shape.polygons([ring([(139.0, 35.0), (139.001, 35.0), (139.001, 35.001)]), ring([(139.02, 35.0), (139.021, 35.0), (139.021, 35.001)])])
        assertSmallestEnclosing(two)
        let circle = Circle(center: LonLat(lon: 1, lat: 2), radiusM: 300)
        XCTAssertEqual(EnclosingCircle.of(.circle(circle)), circle)
    }

    func testLongEdgesAreCoveredNotOnlyTheirEnds() {
        // A 2° wide box at 60°N: its lon/lat-straight top edge bulges north of
        // the geodesic between its corners, so the corners alone would not do.
        let box = Shape.polygons([ring([(10, 59), (12, 59), (12, 60), (10, 60)])])
        let c = EnclosingCircle.of(box)
        for t in stride(from: 0.0, through: 1.0, by: 0.01) {
            XCTAssertLessThanOrEqual(Geodesy.distance(c.center, LonLat(lon: 10 + 2 * t, lat: 60)), c.radiusM + 1e-6)
        }
    }
}

final class PositioningTests: XCTestCase {
    func testAccuracyTiersOfTheSeed() throws {
        let cases: [(Double, Int)] = [(0, -1), (9.99, -1), (10, 10), (99.9, 10), (100, 100), (999, 100), (1000, 1000), (2999.9, 1000), (3000, 3000), (1e9, 3000)]
        for (requested, tier) in cases { XCTAssertEqual(try PositioningSettings.accuracyTier(requested), tier, "\(requested)") }
        XCTAssertThrowsError(try PositioningSettings.accuracyTier(-1))
    }

    func testDefaultsAndValidationNameTheKey() throws {
        let d = try PositioningSettings.from([:])
        XCTAssertEqual(d.radiiM, [100, 1000, 2500, 5000])
        XCTAssertEqual(d.batteryThresholdPct, 40)
        XCTAssertEqual(d.switchAccuracyM, 5000)
        XCTAssertEqual(d.accuracyTier, -1, "unset = best, as the seed's first use")
        XCTAssertEqual(d.effectiveDistanceFilterM, -1)
        let bad: [([String: String], String)] = [
            (["positioning_accuracy_m": "-1"], "positioning_accuracy_m"),
            (["positioning_distance_filter_m": "x"], "positioning_distance_filter_m"),
            (["positioning_battery_threshold_pct": "101"], "positioning_battery_threshold_pct"),
            (["positioning_switch_accuracy_m": "-5"], "positioning_switch_accuracy_m"),
            (["power_saving": "maybe"], "power_saving"),
            (["monitor_radius_small_m": "0.5"], "monitor_radius_small_m"),
            (["monitor_radius_xlarge_m": "0"], "monitor_radius_xlarge_m"),
            (["monitor_speed_low_mps": "0"], "monitor_speed_low_mps"),
            (["monitor_speed_low_mps": "6"], "monitor_speed_low_mps"),
            (["monitor_speed_high_mps": "4"], "monitor_speed_high_mps"),
            (["monitor_speed_medium_mps": "15"], "monitor_speed_medium_mps"),
        ]
        for (stored, key) in bad {
            XCTAssertThrowsError(try PositioningSettings.from(stored), "\(stored)") { e in
                XCTAssertEqual((e as? InputError)?.field, key, "\(stored): \(e)")
            }
        }
        XCTAssertNoThrow(try PositioningSettings.from(["monitor_speed_low_mps": "1", "monitor_speed_medium_mps": "1.5", "monitor_speed_high_mps": "30"]))
    }

    func testRadiusBySpeedAndTheModeDecision() throws {
        let s = try PositioningSettings.from(["power_saving": "on"])
        XCTAssertEqual(s.monitorRadius(speedMps: 0).radiusM, 100)
        XCTAssertEqual(s.monitorRadius(speedMps: 2).radiusM, 1000, "the low threshold itself is medium")
        XCTAssertEqual(s.monitorRadius(speedMps: 14.9).radiusM, 2500)
        XCTAssertEqual(s.monitorRadius(speedMps: 15).radiusM, 5000)
        let saving = s.decide(speedMps: 6, batteryPct: 90)
        XCTAssertEqual(saving.service, .significantChange)
        XCTAssertEqual(saving.regionRadiusM, 2500)

        var off = try PositioningSettings.from(["positioning_accuracy_m": "50", "positioning_distance_filter_m": "25"])
        let standard = off.decide(speedMps: 3, batteryPct: 80)
        XCTAssertEqual(standard.service, .standard)
        XCTAssertEqual(standard.accuracyTier, 10)
        XCTAssertEqual(standard.distanceFilterM, 25)
        XCTAssertEqual(off.decide(speedMps: nil, batteryPct: 39.9).service, .significantChange, "below the battery threshold")
        XCTAssertEqual(off.decide(speedMps: nil, batteryPct: 40).service, .standard, "at the threshold")
        XCTAssertEqual(off.decide(speedMps: nil, batteryPct: nil).service, .standard, "unknown battery: no battery rule")
        off.switchAccuracyM = 30
        XCTAssertEqual(off.decide(speedMps: nil, batteryPct: 80).service, .significantChange, "switching accuracy below the request")
    }
}

final class FixFilterTests: XCTestCase {
    func fix(_ lat: Double, _ accuracy: Double, _ second: Int64) -> Fix {
        Fix(subjectId: "s", ts: Timestamp(microseconds: second * 1_000_000), lat: lat, lon: 139, accuracy: accuracy)
    }

    func testAccuracyTierAndDistanceFilter() throws {
        let f = FixFilter(try PositioningSettings.from(["positioning_accuracy_m": "150", "positioning_distance_filter_m": "50"]))
        XCTAssertEqual(f.maxAccuracyM, 100)
        XCTAssertEqual(f.drop(fix(35, 100, 0), after: nil), nil, "equal to the tier passes")
        XCTAssertEqual(f.drop(fix(35, 100.5, 0), after: nil), .accuracy(limit: 100))
        let last = fix(35, 5, 0)
        guard case .distance(let d, 50)? = f.drop(fix(35.0004, 5, 1), after: last) else { return XCTFail("44 m is under the filter") }
        XCTAssertEqual(d, 44.4, accuracy: 0.5)
        XCTAssertNil(f.drop(fix(35.0005, 5, 1), after: last), "55 m passes")
        XCTAssertEqual(FixFilter(try PositioningSettings.from([:])), FixFilter(maxAccuracyM: nil, minDistanceM: nil), "defaults drop nothing")
    }

    func testDroppedFixesChangeNothingAndAreCounted() throws {
        let area = AreaDefinition(areaId: "A", shape: .circle(Circle(center: LonLat(lon: 139, lat: 35), radiusM: 200)))
        let catalog = MemoryCatalog([JudgedArea(definition: area, defaultConfidence: 0, conditions: [])])
        var judge = SubjectJudge(catalog: catalog, fixFilter: FixFilter(maxAccuracyM: 10, minDistanceM: 100))
        var state = SubjectState(subjectId: "s")
        _ = try judge.judge(fix(35.01, 5, 0), &state)          // far outside: judged
        _ = try judge.judge(fix(35.0, 50, 1), &state)          // inside but too inaccurate: dropped
        XCTAssertNil(state.stays["A"])
        _ = try judge.judge(fix(35.0101, 5, 2), &state)        // 11 m from the last: dropped
        XCTAssertEqual(state.lastFix?.ts, Timestamp(microseconds: 0), "a dropped fix is not the last fix")
        _ = try judge.judge(fix(35.0, 5, 3), &state)           // inside, accurate, far from the last: enters
        XCTAssertEqual(state.stays["A"]?.phase, .inside)
        XCTAssertEqual(judge.counters.judged, 2)
        XCTAssertEqual(judge.counters.droppedAccuracy, 1)
        XCTAssertEqual(judge.counters.droppedDistance, 1)
    }
}

final class RegionPlanTests: XCTestCase {
    func candidate(_ id: String, _ d: Double, radius: Double = 150, until: Timestamp? = nil) -> RegionPlan.Candidate {
        .init(areaId: id, distanceM: d, shape: .circle(Circle(center: LonLat(lon: 139, lat: 35), radiusM: radius)), validUntil: until)
    }

    func testResyncRadiusMarginsCapsAndExpiry() {
        var o = RegionPlan.Options()
        o.marginM = 20; o.minRadiusM = 100; o.maxRadiusM = 1000
        let now = Timestamp(microseconds: 1_000_000_000)
        let plan = RegionPlan(position: LonLat(lon: 139, lat: 35),
                              nearest: [candidate("A", 0, radius: 50), candidate("B", 10, radius: 990, until: Timestamp(microseconds: 4_000_000_000))],
                              nextDistanceM: 700, at: now, options: o)
        XCTAssertEqual(plan.regions.map(\.radiusM), [100, 1000], "50+20 raised to the minimum; 990+20 capped")
        XCTAssertEqual(plan.regions.map(\.capped), [false, true])
        XCTAssertEqual(plan.regions.map(\.expiresInMs), [nil, 3_000_000])
        XCTAssertEqual(plan.resync.radiusM, 699, "1 m short of the next area")
        o.wakeRadiusM = 250
        XCTAssertEqual(RegionPlan(position: plan.position, nearest: [], nextDistanceM: 700, at: nil, options: o).resync.radiusM, 250)
        XCTAssertEqual(RegionPlan(position: plan.position, nearest: [], nextDistanceM: nil, at: nil, options: RegionPlan.Options()).resync.radiusM,
                       100_000, "no further area: the largest radius")
        let android = plan.androidJSON.serialized
        XCTAssertTrue(android.contains(#""requestId":"B","latitude":35,"longitude":139,"radius":1000,"expirationDuration":3000000,"transitionTypes":3"#), android)
        XCTAssertTrue(plan.iosJSON.serialized.contains(#""resync":{"identifier":"gf-resync","center":{"latitude":35,"longitude":139},"radius":699,"notifyOnEntry":false,"notifyOnExit":true}"#))
    }
}

final class LocalEstimateTests: XCTestCase {
    /// The quick look must agree with PreparedShape on containment and never
    /// overstate the distance, or a nearest search could skip a true neighbour.
    func testAgreesWithThePreparedShapeAndBoundsItsDistance() {
        var seed: UInt64 = 11
        func rnd() -> Double { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Double(seed >> 11) / Double(1 << 53) }
        var estimated = 0
        for lat in [-65.0, -20, 0, 35.7, 60, 69] {
            for lon in [-179.99, 139.7] {
                let n = 4 + Int(rnd() * 30)
                var pts: [LonLat] = []
                for k in 0..<n {
                    let a = Double(k) / Double(n) * 2 * .pi, r = 0.003 + rnd() * 0.02
                    pts.append(LonLat(lon: Geodesy.wrapDegrees(lon + r * cos(a) / cos(lat * .pi / 180)), lat: lat + r * sin(a)))
                }
                pts.append(pts[0])
                let hole = (0..<5).map { k -> LonLat in
                    let a = -Double(k) / 5 * 2 * .pi
                    return LonLat(lon: Geodesy.wrapDegrees(lon + 0.001 * cos(a) / cos(lat * .pi / 180)), lat: lat + 0.001 * sin(a))
                }
                let polys = [Polygon([Ring(pts), Ring(hole + [hole[0]])])]
                let prepared = PreparedShape(.polygons(polys))
                for _ in 0..<300 {
                    let q = LonLat(lon: Geodesy.wrapDegrees(lon + (rnd() - 0.5) * 0.2), lat: lat + (rnd() - 0.5) * 0.1)
                    guard let e = LocalEstimate(polys, from: q) else { continue }
                    estimated += 1
                    let d = prepared.signedDistance(q)
                    if abs(d) > 0.01 { XCTAssertEqual(e.inside, d > 0, "\(q)") }
                    XCTAssertLessThanOrEqual(e.lowerBoundM, abs(d) + 1e-6, "\(q)")
                }
            }
        }
        XCTAssertGreaterThan(estimated, 1500, "shapes across the antimeridian are left to the exact path")
    }
}
