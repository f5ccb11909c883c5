import GeofenceCore

/// Removes old notifications, explanations and runs from `main` (a catalog,
/// or a state database), a bounded number of rows at a time, for `geofence
/// prune` (a transaction per step) and `gf_prune` (a step per call, in the
/// caller's transaction). docs/operations.md, "Retention".
///
/// What goes, each kind by its own cutoff (`PruneCutoffs`):
/// - a notification whose time (`ts_us`, the fix's) is before it;
/// - an explanation whose fix's time is before it; one recorded without a
///   time (an invalid fix with no readable time) by its run's start;
/// - a run that started before it, once none of its notifications or
///   explanations is left, and never the newest run: run ids are
///   `max(run_id) + 1`, so removing the newest would hand its number to the
///   next run, and a reader keeping the last run it saw would take that run
///   for one it has read.
///
/// What never goes: the rows of a run not yet finished (`judge --resume`:
/// its resumed command reads them back for --out); the subjects' state (`gf_subject_state`, `gf_inside`),
/// which holds the last-notified days the suppression rules read (schema
/// version 9), so judging after a prune gives what it gave before; the
/// dictionaries `gf_subject_keys` and `gf_area_keys`, one row per subject
/// or area that ever notified, kept so that a key stays its id's (finding
/// the unreferenced ones would cost a scan of every notification).
///
/// Each step scans on from where the last one stopped (ids only grow), so a
/// whole prune reads each table once, and no further than the largest id
/// there when it began: a row inserted meanwhile (a trigger of the user's
/// putting a removed row back, under a new id) is not the prune's to chase.
/// The counts are the rows SQLite deleted (a trigger's RAISE(IGNORE) keeps
/// a row, and it is not counted). Removing notifications, the newest
/// included, never lets an id be handed out again (the floor is raised to
/// the largest id first: `NotificationIds`), so a consumer's
/// `WHERE id > :last_seen` stays exactly-once.
public final class Pruning {
    /// Rows removed, by kind.
    public struct Counts: Equatable, Sendable {
        public var notifications: Int64 = 0
        public var explanations: Int64 = 0
        public var runs: Int64 = 0
        public init() {}
        public var total: Int64 { notifications + explanations + runs }
        public static func += (l: inout Counts, r: Counts) {
            l.notifications += r.notifications; l.explanations += r.explanations; l.runs += r.runs
        }
    }

    private let db: Connection
    public let cutoffs: PruneCutoffs
    /// The largest notification id and gf_explain rowid already looked at.
    private var notificationsAfter = Int64.min
    private var explanationsAfter = Int64.min
    /// The largest notification id and gf_explain rowid when the prune began (read at its first step).
    private var notificationsUpTo: Int64?
    private var explanationsUpTo: Int64?
    private var notificationsDone: Bool
    private var explanationsDone: Bool
    private var runsDone: Bool

    public init(_ db: Connection, cutoffs: PruneCutoffs) {
        self.db = db
        self.cutoffs = cutoffs
        notificationsDone = cutoffs.notifications == nil
        explanationsDone = cutoffs.explanations == nil
        runsDone = cutoffs.runs == nil
    }

    /// True once every kind has nothing more to remove.
    public var isDone: Bool { notificationsDone && explanationsDone && runsDone }

    /// Removes at most `limit` rows (at least 1), notifications first, then
    /// explanations, then runs (a run goes only once its rows have), in the
    /// transaction the caller holds, and returns how many of each. A step
    /// that removes fewer than `limit` has finished every kind.
    public func step(limit: Int) throws -> Counts {
        var counts = Counts()
        var left = Int64(max(limit, 1))
        if !notificationsDone, let cut = cutoffs.notifications {
            let (found, removed) = try removeNotifications(before: cut, limit: left)
            counts.notifications = removed
            left -= found
        }
        if left > 0, !explanationsDone, let cut = cutoffs.explanations {
            let (found, removed) = try removeExplanations(before: cut, limit: left)
            counts.explanations = removed
            left -= found
        }
        if left > 0, !runsDone, let cut = cutoffs.runs {
            counts.runs = try removeRuns(before: cut, limit: left)
        }
        return counts
    }

    /// The next `limit` old notifications by id, from where the last step
    /// stopped: (rows found, rows SQLite deleted).
    private func removeNotifications(before cut: Timestamp, limit: Int64) throws -> (Int64, Int64) {
        if notificationsUpTo == nil {
            notificationsUpTo = try db.scalar("SELECT coalesce(max(id), 0) FROM main.gf_notification_rows").int64 ?? 0
            try NotificationIds.raiseFloor(db)   // committed with this step's deletes, or rolled back with them
        }
        let window = try db.query("""
            SELECT count(*), max(id) FROM (SELECT id FROM main.gf_notification_rows
            WHERE id > ?1 AND id <= ?4 AND ts_us < ?2 AND run_id NOT IN (\(Self.unfinishedRuns)) ORDER BY id LIMIT ?3)
            """, [.integer(notificationsAfter), .integer(cut.microseconds), .integer(limit), .integer(notificationsUpTo ?? 0)])[0]
        let found = window[0].int64 ?? 0
        guard found > 0, let last = window[1].int64 else { notificationsDone = true; return (0, 0) }
        try db.query("DELETE FROM main.gf_notification_rows WHERE id > ?1 AND id <= ?2 AND ts_us < ?3 AND run_id NOT IN (\(Self.unfinishedRuns))",
                     [.integer(notificationsAfter), .integer(last), .integer(cut.microseconds)])
        let removed = Int64(db.changes)
        notificationsAfter = last
        if found < limit { notificationsDone = true }
        return (found, removed)
    }

    /// The next `limit` old explanations by rowid: by their fix's time (the
    /// stored text, whose order is time order), or without one by their run's start.
    private func removeExplanations(before cut: Timestamp, limit: Int64) throws -> (Int64, Int64) {
        if explanationsUpTo == nil {
            explanationsUpTo = try db.scalar("SELECT coalesce(max(rowid), 0) FROM main.gf_explain").int64 ?? 0
        }
        let old = """
            run_id NOT IN (\(Self.unfinishedRuns)) AND (ts < ?2 OR (ts IS NULL AND run_id IN (SELECT run_id FROM main.gf_runs
                                                   WHERE CAST(strftime('%s', started_at) AS INTEGER) < ?3)))
            """
        let values: [SQLiteValue] = [.integer(explanationsAfter), .text(cut.storageText), .real(Double(cut.microseconds) / 1e6)]
        let window = try db.query("""
            SELECT count(*), max(rowid) FROM (SELECT rowid FROM main.gf_explain
            WHERE rowid > ?1 AND rowid <= ?5 AND \(old) ORDER BY rowid LIMIT ?4)
            """, values + [.integer(limit), .integer(explanationsUpTo ?? 0)])[0]
        let found = window[0].int64 ?? 0
        guard found > 0, let last = window[1].int64 else { explanationsDone = true; return (0, 0) }
        try db.query("DELETE FROM main.gf_explain WHERE rowid > ?1 AND rowid <= ?4 AND \(old)", values + [.integer(last)])
        let removed = Int64(db.changes)
        explanationsAfter = last
        if found < limit { explanationsDone = true }
        return (found, removed)
    }

    /// The runs a prune leaves whole: a resumable run not yet finished
    /// (`judge --resume`), whose committed rows its resumed command reads
    /// back for --out.
    static let unfinishedRuns = "SELECT run_id FROM main.gf_runs WHERE status = 'running'"

    /// Up to `limit` runs that started before `cut`, have no notification
    /// or explanation left, and are not the newest. One scan of each table
    /// (SQLite makes each `NOT IN` list once per statement).
    private func removeRuns(before cut: Timestamp, limit: Int64) throws -> Int64 {
        try db.query("""
            DELETE FROM main.gf_runs WHERE run_id IN (
                SELECT run_id FROM main.gf_runs
                WHERE CAST(strftime('%s', started_at) AS INTEGER) < ?1
                  AND run_id < (SELECT max(run_id) FROM main.gf_runs) AND status <> 'running'
                  AND run_id NOT IN (SELECT run_id FROM main.gf_notification_rows)
                  AND run_id NOT IN (SELECT run_id FROM main.gf_explain)
                ORDER BY run_id LIMIT ?2)
            """, [.real(Double(cut.microseconds) / 1e6), .integer(limit)])
        let removed = Int64(db.changes)
        if removed < limit { runsDone = true }
        return removed
    }
}
