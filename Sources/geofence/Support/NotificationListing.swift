import GeofenceCore
import GeofenceSQL

/// Which notifications a listing (`notifications`, `check`, `judge --out`)
/// reads, as one SELECT in canonical order: subject_id, ts, area_id,
/// condition_id, then id (the order written) for rows equal in all four.
///
/// Rule: only the filters given appear in the SQL. A filter written
/// `(? IS NULL OR subject_id = ?)` keeps SQLite from the subject's index,
/// and a subject's listing (or a single `check`) then read every
/// notification of the database. A run just judged names the largest id
/// before it (`Judgement.Report.notificationsAfter`): its rows are read by
/// that id range (the stored rows' rowid, through the gf_notifications
/// view) and sorted, not found among every row.
struct NotificationListing {
    var run: Int64?
    var subject: String?
    var since: String?
    /// Every row of `run` has a larger id (known only for a run just judged).
    var after: Int64?

    init(run: Int64? = nil, subject: String? = nil, since: String? = nil) {
        self.run = run; self.subject = subject; self.since = since
    }

    /// The notifications of a run just judged or checked.
    init(of report: Judgement.Report) {
        run = report.runId
        after = report.notificationsAfter
    }

    func statement(_ conn: Connection) throws -> Statement {
        var clauses: [String] = [], values: [SQLiteValue] = []
        if let after, subject == nil { clauses.append("id > ?"); values.append(.integer(after)) }
        if let run { clauses.append("run_id = ?"); values.append(.integer(run)) }
        if let subject { clauses.append("subject_id = ?"); values.append(.text(subject)) }
        if let since { clauses.append("ts >= ?"); values.append(.text(since)) }
        let rows = try conn.prepare("""
            SELECT \(notificationColumns.joined(separator: ", ")) FROM gf_notifications
            \(clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND "))
            ORDER BY subject_id, ts, area_id, condition_id, id
            """)
        try rows.bind(values)
        return rows
    }
}
