import XCTest
import GeofenceCore
import GeofenceHost
@testable import GeofenceSQL

/// The batch path (subjects judged on several threads, the index in memory)
/// against the single-fix path (one R*Tree query per fix, one thread), on the
/// same catalog and fixes: the same notifications, in the same order. Run
/// under ThreadSanitizer by scripts/sanitize.sh.
final class JudgementSQLTests: DatabaseTestCase {
    /// Sixty squares and diamonds (every fourth confirming IN after two fixes; of the
    /// others, some with an accuracy limit, a confidence or a validity
    /// that ends an hour into the walks, so that verdicts are undecided or
    /// ignored and `--explain` says why) and eleven subjects walking among
    /// them, 150 fixes each, shuffled; and the same fixes in the order
    /// judgement takes them (subject bytes, then time).
    func walks() -> (features: [String], rows: [Judgement.Row], ordered: [Judgement.Row]) {
        var seed: UInt64 = 5
        func rnd() -> Double { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Double(seed >> 11) / Double(1 << 53) }
        var features: [String] = []
        let rules = [#","in_confirm_count":2"#, #","in_accuracy_max_m":20"#, "", #","confidence":0.6"#, "", "", #","out_accuracy_max_m":10"#,
                     #","valid_until":"2027-01-15T09:00:00Z""#]
        for i in 0..<60 {
            let (id, lon, lat, size) = (String(format: "A%02d", i), 139.70 + rnd() * 0.05, 35.70 + rnd() * 0.04, 0.004 + rnd() * 0.01)
            let props = i % 4 == 0 ? rules[0] : rules[i % 8]
            // Half of a diamond's box lies outside it: there the grid's masks leave it out, but not when explaining.
            features.append(i % 8 == 3 || i % 8 == 6 ? diamond(id, lon, lat, size, props: props) : square(id, lon, lat, size, props: props))
        }
        var rows: [Judgement.Row] = []
        // The last two ids are canonically equivalent in Swift but distinct bytes,
        // so distinct subjects for SQLite: the batch must keep them apart too.
        let subjects = (0..<9).map { "s\($0)" } + ["\u{e9}", "e\u{301}"]
        for (s, subject) in subjects.enumerated() {
            var lat = 35.70 + rnd() * 0.04, lon = 139.70 + rnd() * 0.05
            for k in 0..<150 {
                lat += (rnd() - 0.5) * 0.003; lon += (rnd() - 0.5) * 0.003
                rows.append(Judgement.Row(subjectId: subject, ts: String(1_800_000_000 + k * 60 + s), lat: lat, lon: lon, accuracy: 5 + rnd() * 30))
            }
        }
        var generator = SeededGenerator(seed: 1)
        rows.shuffle(using: &generator)
        let ordered = rows.sorted {
            $0.subjectId! != $1.subjectId! || !$0.subjectId!.utf8.elementsEqual($1.subjectId!.utf8)
                ? $0.subjectId!.utf8.lexicographicallyPrecedes($1.subjectId!.utf8) : Int($0.ts!)! < Int($1.ts!)!
        }
        return (features, rows, ordered)
    }

    /// The diamond inside `square`'s square: its corners at the middles of the square's sides.
    func diamond(_ id: String, _ lon: Double, _ lat: Double, _ size: Double, props: String) -> String {
        let h = size / 2
        let c = "[[\(lon + h),\(lat)],[\(lon + size),\(lat + h)],[\(lon + h),\(lat + size)],[\(lon),\(lat + h)],[\(lon + h),\(lat)]]"
        return #"{"type":"Feature","properties":{"area_id":"\#(id)"\#(props)},"geometry":{"type":"Polygon","coordinates":[\#(c)]}}"#
    }

    /// A new catalog of `walks()`'s squares, with or without default conditions.
    func walksCatalog(_ name: String, _ features: [String], defaultConditions: Bool) throws -> Connection {
        let db = try Database.open(dir + "/\(name).db", create: true)
        try Schema.create(db)
        var options = AreaImporter.Options()
        options.defaultConditions = defaultConditions
        _ = try AreaImporter(db).run(path: write("\(name).geojson", collection(features)), options: options)
        return db
    }

    func testBatchOnEveryCoreEqualsFixByFix() throws {
        let (features, rows, ordered) = walks()
        func catalog(_ name: String) throws -> Connection { try walksCatalog(name, features, defaultConditions: true) }
        let single = try catalog("single")
        let judge = try Judgement(single, explain: true)
        for r in ordered { _ = try single.transaction { try judge.check(r, recordRun: false) } }
        // gf_check: its session reads the index a window at a time and reuses the
        // state it saved last; one transaction, so nothing else writes between calls.
        let sql = try catalog("sql")
        try sql.transaction {
            for r in ordered {
                _ = try sql.scalar("SELECT gf_check(?, ?, ?, ?, ?)", [.text(r.subjectId!), .text(r.ts!), .real(r.lat!), .real(r.lon!), .real(r.accuracy!)])
            }
        }
        try assertSameOutcome(sql, single, "gf_check")
        // Fixes ordered in memory, and spilled to SQLite part way through; with
        // a tiny area budget (areas met one by one, and forgotten) and with
        // room for all (every area prepared at once, on a thread of its own
        // while the fixes are staged, and the grid's masks made: without
        // --explain they also leave candidates out).
        for (name, inMemory, budget, explain) in [("batch", 1_000_000, 5, true), ("spilled", 700, 5, true),
                                                  ("prepared", 1_000_000, 1_000, true), ("masked", 1_000_000, 1_000, false),
                                                  ("spilled while preparing", 700, 1_000, false),
                                                  // More areas than the budget, without --explain: each chunk's
                                                  // areas prepared before it, the others let go past the budget.
                                                  ("on demand", 1_000_000, 5, false), ("on demand, spilled", 700, 5, false)] {
            let batch = try catalog(name)
            // Small chunks, so chunk boundaries are exercised.
            let batchJudgement = try Judgement(batch, explain: explain)
            batchJudgement.chunkFixes = 100
            batchJudgement.maxPreparedAreas = budget
            batchJudgement.inMemoryFixes = inMemory
            let report = try batch.transaction { try batchJudgement.run(rows, source: "test") }
            XCTAssertEqual(report.counters.judged, rows.count)
            XCTAssertGreaterThan(report.counters.notifications, 100)
            try assertSameOutcome(batch, single, name)
            if explain {
                // The reasons of a batch (judged through a plan) are those of judging fix by fix.
                let reasons = "SELECT subject_id, ts, area_id, condition_id, kind, reason FROM gf_explain ORDER BY rowid"
                XCTAssertEqual(try batch.query(reasons), try single.query(reasons), name)
                XCTAssertGreaterThan(try batch.scalar("SELECT count(*) FROM gf_explain").int64 ?? 0, 100, name)
            }
            XCTAssertEqual(try batch.scalar("SELECT sql FROM sqlite_master WHERE name = 'gf_notification_rows_by_subject'").string,
                           "CREATE INDEX gf_notification_rows_by_subject ON gf_notification_rows (subject_key, ts_us)", name)
        }
    }

    /// Areas without conditions, limits or validity are "plain": a batch
    /// counts a fix inside one in a stay already INSIDE from the grid alone.
    /// The stays (streaks, entry times) and transitions must be exactly those
    /// of judging fix by fix, which reads every area.
    func testPlainAreasCountedFromTheIndexAloneMatchFixByFix() throws {
        let (features, rows, ordered) = walks()
        func catalog(_ name: String) throws -> Connection { try walksCatalog(name, features, defaultConditions: false) }
        let single = try catalog("single")
        let judge = try Judgement(single)
        var transitions = 0
        for r in ordered { transitions += try single.transaction { try judge.check(r, recordRun: false) }.0.counters.transitions }
        let batch = try catalog("batch")
        let report = try batch.transaction { try Judgement(batch).run(rows, source: "test") }
        XCTAssertGreaterThan(transitions, 100)
        XCTAssertEqual(report.counters.transitions, transitions)
        let stays = "SELECT * FROM gf_stays ORDER BY subject_id, area_id"
        XCTAssertEqual(try batch.query(stays), try single.query(stays))
        XCTAssertGreaterThan(try batch.scalar("SELECT max(in_streak) FROM gf_stays").int64 ?? 0, 10)
    }

    /// Areas prepared all at once must not make an area that cannot be read
    /// fail a batch that never meets it; a batch that meets it fails, naming it,
    /// and leaves the database as it was.
    func testAnUnreadableAreaFailsOnlyTheBatchThatMeetsIt() throws {
        let db = try newCatalog()
        _ = try AreaImporter(db).run(path: write("a.geojson", collection([square("near", 139.70, 35.70), square("far", 135.0, 34.0)])),
                                     options: AreaImporter.Options())
        try db.execute("UPDATE gf_areas SET timezone = 'Nowhere/Atlantis' WHERE area_id = 'far'")
        let near = (0..<20).map { Judgement.Row(subjectId: "s", ts: String(1_800_000_000 + $0), lat: 35.705, lon: 139.705, accuracy: 5) }
        let judgement = try Judgement(db)
        let report = try db.transaction { try judgement.run(near, source: "test") }
        XCTAssertEqual(report.counters.transitions, 1)
        let stays = try db.query("SELECT subject_id, area_id, state FROM gf_stays")
        let far = (0..<20).map { Judgement.Row(subjectId: "t", ts: String(1_800_000_000 + $0), lat: 34.005, lon: 135.005, accuracy: 5) }
        XCTAssertThrowsError(try db.transaction { try Judgement(db).run(far, source: "test") }) { e in
            XCTAssertTrue("\(e)".contains("Nowhere/Atlantis"), "\(e)")
        }
        XCTAssertEqual(try db.query("SELECT subject_id, area_id, state FROM gf_stays"), stays)
    }

    func assertSameOutcome(_ batch: Connection, _ single: Connection, _ name: String) throws {
        let sql = "SELECT subject_id, ts, area_id, condition_id, transition FROM gf_notifications ORDER BY id"
        XCTAssertEqual(try batch.query(sql), try single.query(sql), name)
        XCTAssertEqual(try batch.query("SELECT * FROM gf_stays ORDER BY subject_id, area_id"),
                       try single.query("SELECT * FROM gf_stays ORDER BY subject_id, area_id"), name)
        XCTAssertEqual(try batch.scalar("SELECT count(DISTINCT subject_id) FROM gf_notifications").int64, 11, name)
    }
}

extension JudgementSQLTests {
    /// gf_check keeps prepared areas between calls; a change to the catalog,
    /// on this connection or committed by another, must be seen by the next call.
    func testCheckSessionSeesEveryCatalogChange() throws {
        let db = try newCatalog()
        var o = AreaImporter.Options(); o.defaultConditions = true
        _ = try AreaImporter(db).run(path: write("a.geojson", collection([square("A", 139.0, 35.0), square("B", 139.1, 35.0)])), options: o)
        func check(_ subject: String, _ lon: Double, _ t: Int) throws -> String {
            try db.scalar("SELECT gf_check(?, ?, 35.005, ?, 5)", [.text(subject), .text(String(1_800_000_000 + t)), .real(lon)]).string ?? ""
        }
        XCTAssertTrue(try check("s1", 139.005, 0).contains(#""area_id":"A""#))
        XCTAssertEqual(try db.scalar("SELECT cached FROM gf_session"), .integer(1), "the session holds a judgement now")
        // This connection changes B: a fix 5 m accurate can no longer enter it.
        try db.execute("UPDATE gf_areas SET in_accuracy_max_m = 1 WHERE area_id = 'B'")
        XCTAssertEqual(try check("s2", 139.105, 1), "[]")
        // Another connection commits the limit away again.
        let other = try Database.open(dir + "/t.db")
        try other.execute("UPDATE gf_areas SET in_accuracy_max_m = NULL WHERE area_id = 'B'")
        XCTAssertTrue(try check("s3", 139.105, 2).contains(#""area_id":"B""#))
        // Removing an area: no notification from it, no error.
        try other.execute("DELETE FROM gf_areas WHERE area_id = 'A'")
        XCTAssertEqual(try check("s4", 139.005, 3), "[]")
        // An area added next to where the session last read the index (its window) is seen.
        XCTAssertEqual(try check("s5", 139.12, 4), "[]")
        try other.execute("""
            INSERT INTO gf_areas (area_id, kind, geom) VALUES ('C', 'polygon',
                GeomFromText('MULTIPOLYGON(((139.115 35.0, 139.125 35.0, 139.125 35.01, 139.115 35.01, 139.115 35.0)))', 4326))
            """)
        try other.execute("INSERT INTO gf_conditions (condition_id, area_id, timing) VALUES (100, 'C', 'IN')")
        XCTAssertTrue(try check("s5", 139.12, 5).contains(#""area_id":"C""#))
        // The state the session saved last is reused only while the database shows it:
        // an ENTER rolled back is not remembered.
        try db.execute("BEGIN")
        XCTAssertTrue(try check("s6", 139.12, 6).contains(#""area_id":"C""#))
        try db.execute("ROLLBACK")
        XCTAssertTrue(try check("s6", 139.12, 7).contains(#""area_id":"C""#), "the rolled-back ENTER happens again")
        XCTAssertEqual(try check("s6", 139.12, 8), "[]", "and is remembered once it holds")
    }
}

extension JudgementSQLTests {
    /// `gf_stays` shows behaviour §4's counts after every fix, read from the
    /// subject's record; a judgement that loads the record (a new `Judgement`,
    /// or gf_check's session) counts on from them; gf_inside holds the stay
    /// exactly while it is INSIDE.
    func testStreaksAndInsideRowsFollowEveryFix() throws {
        let db = try newCatalog()
        let props = #","in_confirm_count":2,"out_confirm_count":2,"in_accuracy_max_m":100"#
        _ = try AreaImporter(db).run(path: write("a.geojson", collection([square("A", 139.0, 35.0, props: props)])), options: .init())
        // (lat, lon, accuracy) and the stay it leaves: state, in_streak, out_streak; nil: no row.
        let inside = (35.005, 139.005), outside = (35.5, 139.5)
        let steps: [((Double, Double), Double, (String, Int64, Int64)?)] = [
            (inside, 5, ("UNKNOWN", 1, 0)),
            (inside, 5, ("INSIDE", 2, 0)),      // ENTER
            (inside, 5, ("INSIDE", 3, 0)),
            (inside, 500, ("INSIDE", 3, 0)),    // undecided: above the IN accuracy limit
            (inside, 5, ("INSIDE", 4, 0)),
            (inside, 5, ("INSIDE", 5, 0)),
            (outside, 5, ("INSIDE", 0, 1)),
            (outside, 5, nil),                  // EXIT: OUTSIDE without a streak is not stored
            (inside, 5, ("UNKNOWN", 1, 0)),     // which behaves as OUTSIDE (behaviour §4)
            (inside, 5, ("INSIDE", 2, 0)),
        ]
        for viaSQL in [false, true] {
            let subject = viaSQL ? "sql" : "new judgement per fix"
            var inside: [Bool] = []
            if viaSQL { try db.execute("BEGIN") }
            for (k, (p, accuracy, expected)) in steps.enumerated() {
                let ts = String(1_800_000_000 + k)
                if viaSQL {
                    _ = try db.scalar("SELECT gf_check(?, ?, ?, ?, ?)", [.text(subject), .text(ts), .real(p.0), .real(p.1), .real(accuracy)])
                } else {
                    _ = try Judgement(db).check(Judgement.Row(subjectId: subject, ts: ts, lat: p.0, lon: p.1, accuracy: accuracy), recordRun: false)
                }
                let row = try db.query("SELECT state, in_streak, out_streak FROM gf_stays WHERE subject_id = ?", [.text(subject)])
                XCTAssertEqual(row, expected.map { [[.text($0.0), .integer($0.1), .integer($0.2)]] } ?? [], "\(subject), fix \(k)")
                inside.append(try db.scalar("SELECT count(*) FROM gf_inside WHERE subject_id = ?", [.text(subject)]).int64 == 1)
                XCTAssertEqual(inside.last, expected?.0 == "INSIDE", "\(subject), fix \(k): gf_inside holds the INSIDE stay")
            }
            if viaSQL { try db.execute("COMMIT") }
            XCTAssertTrue(inside.contains(true) && inside.contains(false), subject)
        }
        // Deleting a subject takes its stays: they count by its judged fixes.
        try db.execute("DELETE FROM gf_subjects WHERE subject_id = 'sql'")
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM gf_subject_state WHERE subject_id = 'sql'").int64, 0)
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM gf_inside WHERE subject_id = 'sql'").int64, 0)
        // And deleting from the view deletes the rows.
        try db.execute("DELETE FROM gf_stays")
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM gf_stays").int64, 0)
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM gf_inside").int64, 0)
    }
}

struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 { state = state &* 6364136223846793005 &+ 1442695040888963407; return state }
}

extension JudgementSQLTests {
    /// Areas prepared as the chunks reach them, many at a time on every
    /// core (rows read on one thread while others prepare them), with the
    /// areas a chunk does not need let go past a small budget: the same
    /// outcome as every area prepared first. Enough areas and fixes for the
    /// preparing and walking threads to run (ThreadSanitizer sees them).
    func testAreasPreparedOnDemandOnEveryCoreMatchAllPrepared() throws {
        var seed: UInt64 = 11
        func rnd() -> Double { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Double(seed >> 11) / Double(1 << 53) }
        var features: [String] = []
        for i in 0..<600 {
            features.append(square(String(format: "B%03d", i), 139.60 + rnd() * 0.3, 35.60 + rnd() * 0.2, 0.003 + rnd() * 0.01,
                                   props: i % 5 == 0 ? #","out_confirm_count":2"# : ""))
        }
        var rows: [Judgement.Row] = []
        for s in 0..<40 {
            var lat = 35.60 + rnd() * 0.2, lon = 139.60 + rnd() * 0.3
            for k in 0..<600 {
                lat += (rnd() - 0.5) * 0.004; lon += (rnd() - 0.5) * 0.004
                rows.append(Judgement.Row(subjectId: "d\(s)", ts: String(1_800_000_000 + k * 60 + s), lat: lat, lon: lon, accuracy: 5 + rnd() * 30))
            }
        }
        let prepared = try walksCatalog("prepared", features, defaultConditions: true)
        let onDemand = try walksCatalog("on-demand", features, defaultConditions: true)
        let all = try prepared.transaction { try Judgement(prepared).run(rows, source: "test") }
        let judgement = try Judgement(onDemand)
        judgement.maxPreparedAreas = 100
        judgement.onDemandChunkFixes = 10_000
        let report = try onDemand.transaction { try judgement.run(rows, source: "test") }
        XCTAssertGreaterThan(all.counters.notifications, 1000)
        XCTAssertEqual(report.counters.transitions, all.counters.transitions)
        let sql = "SELECT subject_id, ts, area_id, condition_id, transition FROM gf_notifications ORDER BY id"
        XCTAssertEqual(try onDemand.query(sql), try prepared.query(sql))
        let stays = "SELECT * FROM gf_stays ORDER BY subject_id, area_id"
        XCTAssertEqual(try onDemand.query(stays), try prepared.query(stays))
    }
}
