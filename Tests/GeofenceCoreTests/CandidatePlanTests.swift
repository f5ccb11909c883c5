import XCTest
@testable import GeofenceCore

/// Judging by a plan (CandidatePlan, PlannedAreas, SubjectJudge+Plan) against
/// judging fix by fix through a MemoryCatalog: the same notifications and the
/// same states after every fix, on random areas with every kind of rule.
final class CandidatePlanTests: XCTestCase {
    func testPlannedJudgingEqualsFixByFix() throws {
        var seed: UInt64 = 11
        func rnd() -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Double(seed >> 11) / Double(UInt64(1) << 53)
        }
        let utc = try TimeZone.load("UTC")
        let t0 = try Timestamp.parse("2026-11-20T08:00:00Z").microseconds
        var areas: [JudgedArea] = []
        var kinds = Set<Int>()
        for i in 0..<150 {
            let cx = 139.70 + rnd() * 0.08, cy = 35.60 + rnd() * 0.08, r = 0.001 + rnd() * 0.006
            let shape: Shape
            if i % 5 == 0 {
                shape = .circle(Circle(center: LonLat(lon: cx, lat: cy), radiusM: r * 90_000))
            } else {
                let n = 4 + Int(rnd() * 12)
                var ring = (0..<n).map { k -> LonLat in
                    let a = Double(k) / Double(n) * 2 * .pi, rr = r * (0.5 + 0.5 * rnd())
                    return LonLat(lon: cx + rr * cos(a), lat: cy + rr * sin(a))
                }
                ring.append(ring[0])
                shape = .polygons([Polygon([Ring(ring)])])
            }
            var d = AreaDefinition(areaId: String(format: "A%03d", i), shape: shape)
            var conditions: [ConditionDefinition] = []
            let kind = i % 8
            kinds.insert(kind)
            switch kind {
            case 1: d.inConfirmCount = 2; d.outConfirmCount = 3
            case 2: d.confidence = 0.9
            case 3:  // valid for the first half of the run only
                d.validFrom = Timestamp(microseconds: t0)
                d.validUntil = Timestamp(microseconds: t0 + 3_000 * 1_000_000)
            case 4: d.inAccuracyMaxM = 30; d.outAccuracyMaxM = 60
            case 5: d.inConfirmCount = 70_000  // too large for the packed counts
            case 6:
                conditions = [ConditionDefinition(conditionId: Int64(3 * i), areaId: d.areaId, timing: .IN),
                              ConditionDefinition(conditionId: Int64(3 * i + 1), areaId: d.areaId, timing: .OUT)]
                var dwell = ConditionDefinition(conditionId: Int64(3 * i + 2), areaId: d.areaId, timing: .DWELL)
                dwell.dwellSeconds = 300
                conditions.append(dwell)
            case 7:  // IN and OUT conditions only: still plain (they fire on transitions alone)
                conditions = [ConditionDefinition(conditionId: Int64(3 * i), areaId: d.areaId, timing: .IN),
                              ConditionDefinition(conditionId: Int64(3 * i + 1), areaId: d.areaId, timing: .OUT)]
            default: break  // plain
            }
            areas.append(JudgedArea(definition: d, defaultConfidence: 0, conditions: conditions.map { ($0, utc) }))
        }
        XCTAssertEqual(kinds.count, 8)
        // The catalog without a plan, and the same areas by grid index with masks.
        let byId = MemoryCatalog(areas)
        let grid0 = CandidateGrid(areas.map { ($0.definition.areaId, $0.shape.boundingBox) })
        var outside = [UInt64](repeating: 0, count: grid0.entryCount), inside = outside
        outside.withUnsafeMutableBufferPointer { o in
            inside.withUnsafeMutableBufferPointer { n in
                for (i, a) in areas.enumerated() { grid0.writeMasks(ofArea: i, a.shape, outside: o, inside: n) }
            }
        }
        let planned = PlannedAreas(grid: grid0.withMasks(outside: outside, inside: inside), areas: areas)

        // Random walks of a few subjects, some fixes far outside, some stale.
        var fixes: [Fix] = []
        var walks = (0..<6).map { _ in (lon: 139.70 + rnd() * 0.08, lat: 35.60 + rnd() * 0.08) }
        for step in 0..<900 {
            for s in walks.indices {
                walks[s].lon += (rnd() - 0.5) * 0.002
                walks[s].lat += (rnd() - 0.5) * 0.002
                let far = step % 97 == 0
                let ts = t0 + Int64(step) * 6_000_000 - (step % 131 == 0 ? 60_000_000 : 0)
                fixes.append(Fix(subjectId: "s\(s)", ts: Timestamp(microseconds: ts), lat: far ? 36.5 : walks[s].lat,
                                 lon: far ? 140.5 : walks[s].lon, accuracy: rnd() < 0.1 ? 150 : 3 + rnd() * 40))
            }
        }
        // The plan, in two shares, as two threads would make it.
        var spans = [CandidatePlan.Span](repeating: CandidatePlan.Span(), count: fixes.count)
        var entries: [[UInt32]] = [[], []]
        fixes.withUnsafeBufferPointer { f in
            let order = CandidatePlan.cellOrder(f, planned.grid)
            XCTAssertEqual(Set(order), Set(fixes.indices))
            let keys = order.map { planned.grid.subcellKey(of: f[$0].position) ?? Int.max }
            XCTAssertEqual(keys, keys.sorted(), "by cell, then by sub-cell, outside the grid last")
            spans.withUnsafeMutableBufferPointer { sp in
                let half = order.count / 2
                CandidatePlan.plan(f, order[..<half], share: 0, areas: planned, into: &entries[0], spans: sp)
                CandidatePlan.plan(f, order[half...], share: 1, areas: planned, into: &entries[1], spans: sp)
            }
        }
        var plainJudge = SubjectJudge(catalog: byId), planJudge = SubjectJudge(catalog: byId)
        var plainStates = [String: SubjectState](), planStates = [String: SubjectState]()
        var notified = 0
        for (k, fix) in fixes.enumerated() {
            var a = plainStates[fix.subjectId] ?? SubjectState(subjectId: fix.subjectId)
            var b = planStates[fix.subjectId] ?? SubjectState(subjectId: fix.subjectId)
            let expected = try plainJudge.judge(fix, &a)
            let s = spans[k]
            let got = try entries[Int(s.share)].withUnsafeBufferPointer { e in
                try planJudge.judge(fix, &b, plan: SubjectJudge.PlannedFix(UnsafeBufferPointer(rebasing: e[Int(s.start)..<Int(s.end)]), planned))
            }
            XCTAssertEqual(got, expected, "fix \(k)")
            XCTAssertEqual(b, a, "fix \(k)")
            notified += expected.count
            plainStates[fix.subjectId] = a
            planStates[fix.subjectId] = b
        }
        XCTAssertEqual(planJudge.counters, plainJudge.counters)
        // The run did meet what it is meant to compare.
        XCTAssertGreaterThan(plainJudge.counters.transitions, 200)
        XCTAssertGreaterThan(plainJudge.counters.stale, 0)
        XCTAssertGreaterThan(notified, 20)
    }

    func testOrderKeysOrderAsTheIds() {
        let grid = CandidateGrid([("b", BoundingBox(minLon: 0, minLat: 0, maxLon: 1, maxLat: 1)),
                                  ("d", BoundingBox(minLon: 0, minLat: 0, maxLon: 1, maxLat: 1))])
        XCTAssertEqual(["a", "b", "c", "d", "e"].map(grid.orderKey), [0, 1, 2, 3, 4])
        var stays = StayMap()
        stays["c"] = StayState()
        stays["b"] = StayState()
        XCTAssertEqual(stays.orderKeys, [-1, -1])
        stays.fillOrderKeys(grid.orderKey)
        XCTAssertEqual(stays.orderKeys, [1, 2])
        // Order keys are not part of the stays' value.
        XCTAssertEqual(stays, ["b": StayState(), "c": StayState()])
    }
}
