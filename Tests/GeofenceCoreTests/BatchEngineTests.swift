import XCTest
@testable import GeofenceCore

/// The batch engine behind its doors with no database at all: areas from a
/// `MemoryAreaSource`, state records in a dictionary, results in arrays (the
/// shape of a Spark task's doors). Every candidate strategy, cut into any
/// chunks, gives what judging each subject's fixes one by one gives; and a
/// batch split in two, the state records carried between them, gives what
/// one batch gives.
final class BatchEngineTests: XCTestCase {
    /// State records kept in a dictionary: one per subject.
    final class RecordStore: SubjectStateStore {
        var records: [String: SubjectState] = [:]
        func load(_ subject: String) throws -> SubjectState { records[subject] ?? SubjectState(subjectId: subject) }
        func save(_ state: SubjectState, before: SubjectState) throws { records[state.subjectId] = state }
    }

    /// Results kept in arrays, in the order they are handed over.
    final class ArraySink: RunSink {
        var notifications: [GeofenceCore.Notification] = []
        var began = 0, finished = 0
        func checkStillWanted() throws {}
        func willStore(validFixes: Int) throws { began += 1 }
        func store(_ notifications: [GeofenceCore.Notification], encoded: [UInt8]?) throws { self.notifications += notifications }
        func store(_ explanations: [Explanation]) throws {}
        func finish() throws { finished += 1 }
        var encode: (@Sendable ([GeofenceCore.Notification]) -> [UInt8]?)? { nil }
    }

    /// 80 squares and circles over a small town, each with IN, OUT and a 10-minute DWELL.
    func areas() throws -> [JudgedArea] {
        let utc = try TimeZone.load("UTC")
        return (0..<80).map { i in
            let lon = 139.70 + Double(i % 10) * 0.004, lat = 35.60 + Double(i / 10) * 0.004
            let id = "A\(i)"
            var d: AreaDefinition
            if i % 3 == 0 {
                d = AreaDefinition(areaId: id, shape: .circle(Circle(center: LonLat(lon: lon, lat: lat), radiusM: 300)))
            } else {
                let s = 0.005
                d = AreaDefinition(areaId: id, shape: .polygons([Polygon([Ring([
                    LonLat(lon: lon, lat: lat), LonLat(lon: lon + s, lat: lat), LonLat(lon: lon + s, lat: lat + s),
                    LonLat(lon: lon, lat: lat + s), LonLat(lon: lon, lat: lat)])])]))
            }
            d.inConfirmCount = 1 + i % 2
            var dwell = ConditionDefinition(conditionId: Int64(3 * i + 3), areaId: id, timing: .DWELL)
            dwell.dwellSeconds = 600
            let conditions = [ConditionDefinition(conditionId: Int64(3 * i + 1), areaId: id, timing: .IN),
                              ConditionDefinition(conditionId: Int64(3 * i + 2), areaId: id, timing: .OUT), dwell]
            return JudgedArea(definition: d, defaultConfidence: 0.5, conditions: conditions.map { ($0, utc) })
        }
    }

    /// Random walks of 12 subjects, a fix a minute each, interleaved in time (as a feed comes).
    func rows() -> [FixRow] {
        var seed: UInt64 = 11
        func rnd() -> Double { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Double(seed >> 11) / Double(1 << 53) }
        var at = (0..<12).map { _ in (lat: 35.60 + rnd() * 0.035, lon: 139.70 + rnd() * 0.04) }
        var rows: [FixRow] = []
        for minute in 0..<240 {
            for s in at.indices {
                at[s].lat += (rnd() - 0.5) * 0.002
                at[s].lon += (rnd() - 0.5) * 0.002
                let ts = "2026-11-20T\(String(format: "%02d:%02d", 8 + minute / 60, minute % 60)):00Z"
                rows.append(FixRow(subjectId: "s\(s)", ts: ts, lat: at[s].lat, lon: at[s].lon, accuracy: 5 + rnd() * 60))
            }
        }
        return rows
    }

    /// Each subject's fixes judged one by one, in time order: the reference.
    func reference(_ rows: [FixRow], _ areas: [JudgedArea]) throws -> [GeofenceCore.Notification] {
        let catalog = MemoryCatalog(areas)
        var judge = SubjectJudge(catalog: catalog)
        var out: [GeofenceCore.Notification] = []
        let fixes = rows.compactMap(\.validFix)
        for subject in Set(fixes.map(\.subjectId)).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            var state = SubjectState(subjectId: subject)
            for f in fixes where f.subjectId == subject { out += try judge.judge(f, &state) }
        }
        return out
    }

    func run(_ rows: [FixRow], _ areas: [JudgedArea], store: RecordStore, configure: (inout BatchSettings) -> Void) throws -> ArraySink {
        let sink = ArraySink()
        let engine = BatchEngine(BatchDoors(areas: try MemoryAreaSource(areas), states: store, sink: sink))
        configure(&engine.settings)
        let report = try engine.run(rows)
        XCTAssertEqual(report.fixes, rows.count)
        XCTAssertEqual(sink.finished, 1)
        return sink
    }

    func testEveryStrategyAndChunkingGivesTheReference() throws {
        let (rows, areas) = (rows(), try areas())
        let expected = try reference(rows, areas)
        XCTAssertGreaterThan(expected.count, 100, "the walks make transitions")
        // fixes ≥ areas: every area prepared, judged through a plan, in one chunk or several;
        // more areas than maxPreparedAreas: on demand, in chunks of a few subjects or one each.
        let settings: [(String, (inout BatchSettings) -> Void)] = [
            ("prepareAll", { _ in }),
            ("prepareAll, small chunks", { $0.plannedChunkFixes = 500 }),
            ("prepareAll, planned in waves", { $0.planWaveFixes = 100 }),
            ("prepareAll, small chunks in waves", { $0.plannedChunkFixes = 1500; $0.planWaveFixes = 100 }),
            ("onDemand, small chunks", { $0.maxPreparedAreas = 10; $0.onDemandChunkFixes = 700 }),
            ("onDemand, a subject a chunk", { $0.maxPreparedAreas = 10; $0.onDemandChunkFixes = 1 }),
        ]
        for (name, configure) in settings {
            let sink = try run(rows, areas, store: RecordStore(), configure: configure)
            XCTAssertEqual(sink.notifications, expected, name)
        }
        // Fewer fixes than areas / 30: candidates per fix (rtreePerFix), each subject's state
        // carried from one small batch to the next.
        let store = RecordStore()
        var perFix: [GeofenceCore.Notification] = []
        for k in stride(from: 0, to: rows.count, by: 2) {
            perFix += try run(Array(rows[k..<(k + 2)]), areas, store: store) { _ in }.notifications
        }
        XCTAssertEqual(perFix.sorted(by: Self.canonical), expected)
    }

    func testABatchSplitInTwoWithItsStateCarriedGivesOneBatch() throws {
        let (rows, areas) = (rows(), try areas())
        let whole = try run(rows, areas, store: RecordStore()) { _ in }
        let store = RecordStore()
        let first = try run(Array(rows[..<1500]), areas, store: store) { _ in }
        // The records alone carry the subjects from one batch to the next.
        let carried = RecordStore()
        carried.records = store.records
        let second = try run(Array(rows[1500...]), areas, store: carried) { _ in }
        XCTAssertEqual((first.notifications + second.notifications).sorted(by: Self.canonical), whole.notifications)
        XCTAssertGreaterThan(whole.notifications.count, 100)
    }

    /// Canonical order: subject (by its bytes), time, area_id, condition_id.
    static func canonical(_ a: GeofenceCore.Notification, _ b: GeofenceCore.Notification) -> Bool {
        if a.subjectId != b.subjectId { return a.subjectId.utf8.lexicographicallyPrecedes(b.subjectId.utf8) }
        if a.ts != b.ts { return a.ts < b.ts }
        if a.areaId != b.areaId { return a.areaId.utf8.lexicographicallyPrecedes(b.areaId.utf8) }
        return a.conditionId < b.conditionId
    }

    func testWavesCoverEverySubjectOnceInOrder() {
        // 40 subjects of 1 to 40 fixes: waves of about 1/32 of the fixes, doubling up to a quarter.
        var subjects: [Range<Int>] = []
        for n in 1...40 { let start = subjects.last?.upperBound ?? 0; subjects.append(start..<(start + n)) }
        let total = subjects.last!.upperBound
        let waves = PlanWaves.cut(subjects, fixes: total, width: 2, wavesFrom: 100)
        XCTAssertGreaterThan(waves.count, 3)
        XCTAssertEqual(waves.first?.lowerBound, 0)
        XCTAssertEqual(waves.last?.upperBound, subjects.count)
        for (a, b) in zip(waves, waves.dropFirst()) { XCTAssertEqual(a.upperBound, b.lowerBound); XCTAssertFalse(b.isEmpty) }
        XCTAssertEqual(PlanWaves.cut(subjects, fixes: total, width: 1, wavesFrom: 100), [0..<40], "one thread: one wave")
        XCTAssertEqual(PlanWaves.cut(subjects, fixes: total, width: 2, wavesFrom: total + 1), [0..<40], "a small chunk: one wave")
    }
}
