import XCTest
@testable import GeofenceCore

/// Scenario tests of behaviour §4–§6 on the pure core: a MemoryCatalog, real time zones.
final class JudgementTests: XCTestCase {
    // A 0.01° square near Tokyo Station: inside at lat 35.685, outside at 35.70.
    static func square(_ id: String, lon: Double = 139.76, lat: Double = 35.68, size: Double = 0.01) -> AreaDefinition {
        AreaDefinition(areaId: id, shape: .polygons([Polygon([Ring([
            LonLat(lon: lon, lat: lat), LonLat(lon: lon + size, lat: lat), LonLat(lon: lon + size, lat: lat + size),
            LonLat(lon: lon, lat: lat + size), LonLat(lon: lon, lat: lat)])])]))
    }

    func area(_ a: AreaDefinition, _ conditions: [ConditionDefinition], zone: String = "UTC", confidence: Double = 0) throws -> JudgedArea {
        let tz = try TimeZone.load(zone)
        return JudgedArea(definition: a, defaultConfidence: confidence, conditions: conditions.map { c in (c, try! c.timezone.map { try TimeZone.load($0) } ?? tz) })
    }

    func conditions(_ area: String, _ timings: ConditionDefinition.Timing...) -> [ConditionDefinition] {
        timings.enumerated().map { ConditionDefinition(conditionId: Int64($0.offset + 1), areaId: area, timing: $0.element) }
    }

    let inside = (35.685, 139.765), outside = (35.70, 139.765)

    /// Runs fixes (time, lat, lon, accuracy) for one subject; returns "HH:MM area condition transition".
    func run(_ catalog: JudgeCatalog, _ fixes: [(String, Double, Double, Double)], subject: String = "s",
             state: inout SubjectState, explain: Bool = false) throws -> [String] {
        var judge = SubjectJudge(catalog: catalog, explain: explain)
        var out: [String] = []
        for (t, lat, lon, acc) in fixes {
            for n in try judge.judge(Fix(subjectId: subject, ts: try Timestamp.parse(t), lat: lat, lon: lon, accuracy: acc), &state) {
                out.append("\(t) \(n.areaId) \(n.conditionId) \(n.transition.rawValue)")
            }
        }
        return out
    }

    func run(_ catalog: JudgeCatalog, _ fixes: [(String, Double, Double, Double)]) throws -> [String] {
        var s = SubjectState(subjectId: "s")
        return try run(catalog, fixes, state: &s)
    }

    func t(_ minute: Int) -> String { "2026-11-20T10:\(minute < 10 ? "0" : "")\(minute):00Z" }

    func testConfirmCountsWithJitterAtTheBoundary() throws {
        var a = Self.square("A")
        let track = [(inside, 0), (outside, 1), (inside, 2), (inside, 3), (inside, 4), (outside, 5), (inside, 6), (outside, 7), (outside, 8), (outside, 9)]
        let fixes = track.map { (t($0.1), $0.0.0, $0.0.1, 5.0) }
        let one = try run(MemoryCatalog([area(a, conditions("A", .IN, .OUT))]), fixes)
        XCTAssertEqual(one, ["\(t(0)) A 1 IN", "\(t(1)) A 2 OUT", "\(t(2)) A 1 IN", "\(t(5)) A 2 OUT", "\(t(6)) A 1 IN", "\(t(7)) A 2 OUT"])
        a.inConfirmCount = 3; a.outConfirmCount = 3
        let three = try run(MemoryCatalog([area(a, conditions("A", .IN, .OUT))]), fixes)
        XCTAssertEqual(three, ["\(t(4)) A 1 IN", "\(t(9)) A 2 OUT"])
    }

    func testFirstSeenOutsideIsSilentAndUndecidedKeepsStreaks() throws {
        var a = Self.square("A")
        a.inConfirmCount = 2
        a.inAccuracyMaxM = 50
        let cat = MemoryCatalog([try area(a, conditions("A", .IN, .OUT))])
        // outside (silent), inside 1 of 2, too inaccurate (undecided: streak kept), inside 2 of 2 → ENTER.
        let out = try run(cat, [(t(0), outside.0, outside.1, 5), (t(1), inside.0, inside.1, 5),
                                (t(2), inside.0, inside.1, 80), (t(3), inside.0, inside.1, 50)])
        XCTAssertEqual(out, ["\(t(3)) A 1 IN"])
    }

    func testOutAccuracyLimitAndCEPConfidence() throws {
        var a = Self.square("A")
        a.outAccuracyMaxM = 20
        let cat = MemoryCatalog([try area(a, conditions("A", .IN, .OUT), confidence: 0.95)])
        // 35.6895 is ~55 m inside the northern edge (35.69): with CEP95 (1.62×) an accuracy of 30 m needs 48.6 m → inside.
        let out = try run(cat, [(t(0), 35.6895, 139.765, 30), (t(1), 35.70, 139.765, 25), (t(2), 35.69009, 139.765, 10),
                                (t(3), 35.6910, 139.765, 10)])
        // t1: 25 m accuracy is above the OUT limit → undecided; t2: 10 m outside but 16.2 m needed → undecided;
        // t3: 111 m outside → exit.
        XCTAssertEqual(out, ["\(t(0)) A 1 IN", "\(t(3)) A 2 OUT"])
    }

    func testFarAwayFixSeesTheExit() throws {
        let cat = MemoryCatalog([try area(Self.square("A"), conditions("A", .IN, .OUT))])
        let out = try run(cat, [(t(0), inside.0, inside.1, 5), (t(1), 34.69, 135.50, 5)])   // then Osaka
        XCTAssertEqual(out, ["\(t(0)) A 1 IN", "\(t(1)) A 2 OUT"])
    }

    func testOverlappingAreasOrderByAreaThenCondition() throws {
        let a = try area(Self.square("B"), [ConditionDefinition(conditionId: 9, areaId: "B", timing: .IN),
                                            ConditionDefinition(conditionId: 3, areaId: "B", timing: .IN)])
        let b = try area(Self.square("A", lon: 139.762, lat: 35.682), conditions("A", .IN))
        let out = try run(MemoryCatalog([a, b]), [(t(0), inside.0, inside.1, 5)])
        XCTAssertEqual(out, ["\(t(0)) A 1 IN", "\(t(0)) B 3 IN", "\(t(0)) B 9 IN"])
    }

    func testStaleFixesAreSkipped() throws {
        let cat = MemoryCatalog([try area(Self.square("A"), conditions("A", .IN, .OUT))])
        var s = SubjectState(subjectId: "s")
        var judge = SubjectJudge(catalog: cat)
        _ = try judge.judge(Fix(subjectId: "s", ts: try Timestamp.parse(t(5)), lat: inside.0, lon: inside.1, accuracy: 5), &s)
        let stale = try judge.judge(Fix(subjectId: "s", ts: try Timestamp.parse(t(5)), lat: outside.0, lon: outside.1, accuracy: 5), &s)
        let older = try judge.judge(Fix(subjectId: "s", ts: try Timestamp.parse(t(4)), lat: outside.0, lon: outside.1, accuracy: 5), &s)
        XCTAssertEqual(stale + older, [])
        XCTAssertEqual(judge.counters.stale, 2)
        XCTAssertEqual(s.stays["A"]?.phase, .inside)
    }

    func testInvalidFixes() {
        let cases: [(String?, String?, Double?, Double?, Double?)] = [
            ("s", "2026-01-01T00:00:00Z", 91, 0, 5), ("s", "2026-01-01T00:00:00Z", 0, 181, 5), ("s", "2026-01-01T00:00:00Z", .nan, 0, 5),
            ("s", "2026-01-01T00:00:00Z", 0, 0, -1), ("s", "2026-01-01T00:00:00Z", 0, 0, nil), ("s", nil, 0, 0, 5),
            ("s", "2026-01-01T00:00:00", 0, 0, 5), (nil, "2026-01-01T00:00:00Z", 0, 0, 5),
        ]
        for c in cases {
            if case .success = Fix.validated(subjectId: c.0, time: c.1, lat: c.2, lon: c.3, accuracy: c.4) { XCTFail("\(c) accepted") }
        }
        if case .failure(let e) = Fix.validated(subjectId: "s", time: "2026-01-01T00:00:00", lat: 0, lon: 0, accuracy: 5) {
            XCTAssertTrue(e.reason.contains("no UTC offset"))
        }
    }

    /// The batch's quick test and the validation with reasons must never disagree.
    func testIsValidAgreesWithValidated() throws {
        let ts = try Timestamp.parse("2026-01-01T00:00:00Z")
        let lats: [Double] = [-90.0001, -90, 0, 35.6, 90, 90.0001, .nan, .infinity, -.infinity]
        let lons: [Double] = [-180.0001, -180, 0, 139.7, 180, 180.0001, .nan, .infinity]
        let accuracies: [Double] = [-1, -0.0, 0, 5, 1e300, .infinity, .nan]
        for id in ["", "s"] {
            for lat in lats { for lon in lons { for a in accuracies {
                let accepted: Bool
                if case .success = Fix.validated(subjectId: id, ts: ts, lat: lat, lon: lon, accuracy: a) { accepted = true } else { accepted = false }
                XCTAssertEqual(Fix.isValid(subjectId: id, lat: lat, lon: lon, accuracy: a), accepted, "\(id) \(lat) \(lon) \(a)")
            } } }
        }
    }

    func testValidityPeriodIgnoresTheAreaAndNeverExitsByItself() throws {
        var a = Self.square("A")
        a.validUntil = try Timestamp.parse(t(10))
        a.validFrom = try Timestamp.parse(t(1))
        let cat = MemoryCatalog([try area(a, conditions("A", .IN, .OUT))])
        var s = SubjectState(subjectId: "s")
        let out = try run(cat, [(t(0), inside.0, inside.1, 5), (t(2), inside.0, inside.1, 5), (t(11), outside.0, outside.1, 5),
                                (t(12), inside.0, inside.1, 5)], state: &s)
        XCTAssertEqual(out, ["\(t(2)) A 1 IN"], "before validity: ignored; after: no EXIT, nothing counts")
        XCTAssertEqual(s.stays["A"]?.phase, .inside)
    }

    func testDwellOncePerStayAndNeverAtTheExitFix() throws {
        var dwell = ConditionDefinition(conditionId: 5, areaId: "A", timing: .DWELL)
        dwell.dwellSeconds = 120
        var atEnter = ConditionDefinition(conditionId: 6, areaId: "A", timing: .DWELL)
        atEnter.dwellSeconds = 0
        let cat = MemoryCatalog([try area(Self.square("A"), conditions("A", .IN, .OUT) + [dwell, atEnter])])
        let out = try run(cat, [(t(0), inside.0, inside.1, 5), (t(1), inside.0, inside.1, 5), (t(2), inside.0, inside.1, 5),
                                (t(3), inside.0, inside.1, 5), (t(4), outside.0, outside.1, 5),
                                (t(5), inside.0, inside.1, 5), (t(6), inside.0, inside.1, 5), (t(7), outside.0, outside.1, 5)])
        XCTAssertEqual(out, ["\(t(0)) A 1 IN", "\(t(0)) A 6 DWELL", "\(t(2)) A 5 DWELL", "\(t(4)) A 2 OUT",
                             "\(t(5)) A 1 IN", "\(t(5)) A 6 DWELL", "\(t(7)) A 2 OUT"])
    }

    func testWeekdayWindowWrapsMidnightWithTheFixOwnWeekday() throws {
        var c = ConditionDefinition(conditionId: 1, areaId: "A", timing: .IN)
        c.weekdays = try Weekdays.parse("Sat")
        c.startMinute = 22 * 60; c.endMinute = 6 * 60
        let cat = MemoryCatalog([try area(Self.square("A"), [c] + [ConditionDefinition(conditionId: 2, areaId: "A", timing: .OUT)], zone: "Asia/Tokyo")])
        // Fri 2026-11-20 23:30 JST: in the window, but Friday → blocked. Sat 00:30 JST: Saturday, in window → notifies.
        // Sat 21:00 JST: Saturday but outside the window → blocked.
        var s = SubjectState(subjectId: "s")
        let out = try run(cat, [
            ("2026-11-20T14:30:00Z", inside.0, inside.1, 5), ("2026-11-20T14:40:00Z", outside.0, outside.1, 5),
            ("2026-11-20T15:30:00Z", inside.0, inside.1, 5), ("2026-11-20T15:40:00Z", outside.0, outside.1, 5),
            ("2026-11-21T12:00:00Z", inside.0, inside.1, 5)], state: &s, explain: true)
        XCTAssertEqual(out.filter { $0.contains(" IN") }, ["2026-11-20T15:30:00Z A 1 IN"])
    }

    func testSuppressionAcrossLocalMidnightInTokyo() throws {
        var c = ConditionDefinition(conditionId: 1, areaId: "A", timing: .IN)
        c.renotifySuppressDays = 1
        let cat = MemoryCatalog([try area(Self.square("A"), [c, ConditionDefinition(conditionId: 2, areaId: "A", timing: .OUT)], zone: "Asia/Tokyo")])
        let enterExit = { (a: String, b: String) in [(a, self.inside.0, self.inside.1, 5.0), (b, self.outside.0, self.outside.1, 5.0)] }
        // 23:00 JST notifies (local date D); 23:50 JST same date → suppressed; 00:10 JST next date → notifies again,
        // although only 70 minutes passed (UTC date unchanged).
        let fixes = enterExit("2026-11-20T14:00:00Z", "2026-11-20T14:10:00Z") + enterExit("2026-11-20T14:50:00Z", "2026-11-20T14:55:00Z")
            + enterExit("2026-11-20T15:10:00Z", "2026-11-20T15:20:00Z")
        let out = try run(cat, fixes).filter { $0.contains(" 1 IN") }
        XCTAssertEqual(out, ["2026-11-20T14:00:00Z A 1 IN", "2026-11-20T15:10:00Z A 1 IN"])
    }

    func testDaylightSavingInNewYork() throws {
        var c = ConditionDefinition(conditionId: 1, areaId: "A", timing: .IN)
        c.startMinute = 9 * 60; c.endMinute = 10 * 60
        c.startDay = CivilDate.parse("2026-03-08"); c.endDay = CivilDate.parse("2026-03-08")
        let cat = MemoryCatalog([try area(Self.square("A"), [c, ConditionDefinition(conditionId: 2, areaId: "A", timing: .OUT)], zone: "America/New_York")])
        // On 2026-03-08 clocks spring forward at 02:00 local: 09:30 EDT is 13:30Z (not 14:30Z as in winter).
        let out = try run(cat, [("2026-03-08T13:30:00Z", inside.0, inside.1, 5), ("2026-03-08T13:40:00Z", outside.0, outside.1, 5),
                                ("2026-03-08T14:30:00Z", inside.0, inside.1, 5)])
        XCTAssertEqual(out.filter { $0.contains(" IN") }, ["2026-03-08T13:30:00Z A 1 IN"])
        // The date period is local: 2026-03-09T03:00Z is still the 8th in New York.
        let late = try run(cat, [("2026-03-09T03:00:00Z", inside.0, inside.1, 5)])
        XCTAssertEqual(late, [])
    }

    func testFilterFailureChangesStateAndSpendsTheDwell() throws {
        var inCond = ConditionDefinition(conditionId: 1, areaId: "A", timing: .IN)
        inCond.weekdays = try Weekdays.parse("Sun")
        var dwell = ConditionDefinition(conditionId: 2, areaId: "A", timing: .DWELL)
        dwell.dwellSeconds = 60
        dwell.weekdays = try Weekdays.parse("Sun")
        let cat = MemoryCatalog([try area(Self.square("A"), [inCond, dwell])])
        var s = SubjectState(subjectId: "s")
        // Friday: IN filtered, but the state is INSIDE; the dwell at 10:02 is filtered and spent.
        let out = try run(cat, [(t(0), inside.0, inside.1, 5), (t(2), inside.0, inside.1, 5), (t(3), inside.0, inside.1, 5)], state: &s)
        XCTAssertEqual(out, [])
        XCTAssertEqual(s.stays["A"]?.phase, .inside)
        XCTAssertEqual(s.stays["A"]?.dwellSpent, [2])
    }
}
