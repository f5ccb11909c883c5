import XCTest
import GeofenceCore
import GeofenceHost
@testable import GeofenceSQL

/// The streak rule is written twice on purpose: in Swift
/// (`StayState.continued(by:)`, which `StateStore.load` applies) and in the
/// SQL view `gf_stays`, so the stored state reads right in a plain sqlite3
/// shell without the extension. Both must read every stored row alike.
extension JudgementSQLTests {
    func testTheStaysViewReadsEveryStayAsTheSwiftRuleDoes() throws {
        let (features, rows, _) = walks()
        let db = try walksCatalog("stays", features, defaultConditions: true)
        // Several runs of small chunks: rows saved at different fixes, most
        // of them read back long after (their base lags the subject's count).
        let run = try Judgement(db)
        run.chunkFixes = 97
        var compared = 0, lagging = 0
        for part in stride(from: 0, to: rows.count, by: 400) {
            _ = try db.transaction { try run.run(rows[part..<min(rows.count, part + 400)], source: "test") }
            // A fresh store: nothing kept from the run's saves.
            let store = try StateStore(db)
            for subject in try db.query("SELECT subject_id FROM gf_subjects ORDER BY subject_id").compactMap({ $0[0].string }) {
                let state = try store.load(subject, trustingLastSave: false)
                let view = try db.query("SELECT area_id, state, in_streak, out_streak FROM gf_stays WHERE subject_id = ? ORDER BY area_id",
                                        [.text(subject)])
                XCTAssertEqual(view.count, state.stays.count, subject)
                for row in view {
                    let area = row[0].string ?? ""
                    guard let stay = state.stays[area] else { XCTFail("\(subject) \(area): not loaded"); continue }
                    XCTAssertEqual(row[1].string, stay.phase.rawValue, "\(subject) \(area)")
                    XCTAssertEqual(row[2].int64, Int64(stay.inStreak), "\(subject) \(area)")
                    XCTAssertEqual(row[3].int64, Int64(stay.outStreak), "\(subject) \(area)")
                    compared += 1
                }
                lagging += Int(try db.scalar("""
                    SELECT count(*) FROM gf_stay_rows AS r JOIN gf_subjects AS s USING (subject_id)
                    WHERE r.subject_id = ? AND r.base_judged < s.judged_fixes
                    """, [.text(subject)]).int64 ?? 0)
            }
        }
        XCTAssertGreaterThan(compared, 20)
        XCTAssertGreaterThan(lagging, 10, "rows whose streaks the rule lengthens")
    }
}
