import GeofenceCore
import GeofenceSQL

/// Which notifications a listing (`notifications`, `check`, `judge --out`)
/// reads, as one SELECT in canonical order: subject_id, ts, area_id,
/// condition_id, then id (the order written) for rows equal in all four.
///
/// Rule: only the filters given appear in the SQL. A filter written
/// `(? IS NULL OR subject_id = ?)` keeps SQLite from the (subject_id, ts)
/// index, and a subject's listing (or a single `check`) then read every
/// notification of the database. A run just judged names the largest id
/// before it (`Judgement.Report.notificationsAfter`): when its rows are
/// under half the table, they are read by that id range and sorted, not
/// found by walking the whole index; a run that wrote most of the table
/// walks the index, which needs no sort.
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
        var table = "gf_notifications"
        if let after, subject == nil, try byIdRange(conn, after: after) {
            table += " NOT INDEXED"   // still the rowid range; no index walk
            clauses.append("id > ?"); values.append(.integer(after))
        }
        if let run { clauses.append("run_id = ?"); values.append(.integer(run)) }
        if let subject { clauses.append("subject_id = ?"); values.append(.text(subject)) }
        if let since { clauses.append("ts >= ?"); values.append(.text(since)) }
        let rows = try conn.prepare("""
            SELECT \(notificationColumns.joined(separator: ", ")) FROM \(table)
            \(clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND "))
            ORDER BY subject_id, ts, area_id, condition_id, id
            """)
        try rows.bind(values)
        return rows
    }

    /// Whether the rows past `after` are under half the table's id span
    /// (both ends read from the rowid b-tree, not counted).
    private func byIdRange(_ conn: Connection, after: Int64) throws -> Bool {
        let row = try conn.query("""
            SELECT coalesce((SELECT min(id) FROM gf_notifications), 0), coalesce((SELECT max(id) FROM gf_notifications), 0)
            """).first ?? []
        guard row.count == 2, let low = row[0].int64, let high = row[1].int64, high > after else { return true }
        let span = high.subtractingReportingOverflow(low).partialValue, past = high.subtractingReportingOverflow(after).partialValue
        return past >= 0 && span >= 0 && past < span / 2
    }
}
