import XCTest
import GeofenceCore
import GeofenceHost
@testable import GeofenceSQL

/// The state record is read twice on purpose: in Swift (`SubjectRecord.decode`,
/// which `StateStore.load` applies) and by the SQL view `gf_stays`
/// (json_each), so the stored state reads right in a plain sqlite3 shell
/// without the extension. Both must read every stored stay alike.
extension JudgementSQLTests {
    func testTheStaysViewReadsEveryStayAsTheSwiftRuleDoes() throws {
        let (features, rows, _) = walks()
        let db = try walksCatalog("stays", features, defaultConditions: true)
        // Several runs of small chunks: rows saved at different fixes, most
        // of them read back long after (their base lags the subject's count).
        let run = try Judgement(db)
        run.chunkFixes = 97
        var compared = 0, lengthened = 0
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
                lengthened += view.filter { ($0[2].int64 ?? 0) > 1 || ($0[3].int64 ?? 0) > 1 }.count
            }
        }
        XCTAssertGreaterThan(compared, 20)
        XCTAssertGreaterThan(lengthened, 10, "stays whose streaks grew over several fixes")
    }
}
