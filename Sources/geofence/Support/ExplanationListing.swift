import GeofenceCore
import GeofenceSQL

/// Which explanations (gf_explain, written by `judge --explain` and
/// `check --explain`) `geofence explain` reads, as one SELECT of
/// `explanationColumns` in canonical order: run_id, subject_id, ts,
/// area_id, condition_id, then the row's id (rowid: the order written) for
/// rows equal in all five. NULL sorts first, so a reason about the whole fix
/// (invalid, stale, dropped: no area) comes before that fix's reasons about
/// areas, and an invalid fix without a readable time before the run's timed rows.
///
/// Rule: only the filters given appear in the SQL (as `NotificationListing`).
struct ExplanationListing {
    var run: Int64?
    var subject: String?

    func statement(_ conn: Connection) throws -> Statement {
        var clauses: [String] = [], values: [SQLiteValue] = []
        if let run { clauses.append("run_id = ?"); values.append(.integer(run)) }
        if let subject { clauses.append("subject_id = ?"); values.append(.text(subject)) }
        let rows = try conn.prepare("""
            SELECT \(explanationColumns.joined(separator: ", ")) FROM gf_explain
            \(clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND "))
            ORDER BY run_id, subject_id, ts, area_id, condition_id, rowid
            """)
        try rows.bind(values)
        return rows
    }
}
