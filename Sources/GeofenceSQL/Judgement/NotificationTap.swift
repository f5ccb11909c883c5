import GeofenceCore

/// A copy of a batch's notifications for a caller that also writes them
/// elsewhere (`judge --out`), taken while the run stores them instead of
/// read back from gf_notifications once it is done.
///
///     judgement.notificationTap = NotificationTap(encode: { rows in bytes(rows) },
///                                                 write: { rows, bytes in try file.write(bytes) })
///
/// `encode` runs on the judging thread that judged a subject, with that
/// subject's notifications in the order they are stored; `write` runs on
/// the writing thread, subject after subject in the order they are stored,
/// right after their rows are, with the same notifications and what
/// `encode` gave (nil: it could not). So the encoding overlaps the judging
/// of other subjects, and the writing thread, a batch's critical path, only
/// appends bytes.
///
/// What is stored can differ from what the tap saw when a trigger changes
/// rows, or a table rebuilt by hand stores or orders them otherwise: the
/// caller decides whether a tap's copy stands for the stored rows
/// (`storedAsWritten`).
public struct NotificationTap {
    public let encode: @Sendable ([Notification]) -> [UInt8]?
    public let write: ([Notification], [UInt8]?) throws -> Void

    public init(encode: @escaping @Sendable ([Notification]) -> [UInt8]?, write: @escaping ([Notification], [UInt8]?) throws -> Void) {
        self.encode = encode
        self.write = write
    }

    /// Whether a trigger (a user's, in the database or a temporary one)
    /// names gf_notifications: one on it, or one on any table whose body
    /// changes or reads it (a retention trigger on gf_runs, say; a chain
    /// of triggers ends in one that names it). Such a trigger may change or
    /// remove rows while the run stores them, or reads them as they are
    /// stored: the index cannot be left until the end, and a tap's copy may
    /// not be what was stored. Names are matched as SQLite matches them,
    /// without regard to case; the engine's own triggers never name it.
    public static func notificationsHaveTriggers(_ db: Connection) throws -> Bool {
        try db.scalar("""
            SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%gf_notifications%')
                OR EXISTS (SELECT 1 FROM sqlite_temp_master WHERE type = 'trigger' AND sql LIKE '%gf_notifications%')
            """).int64 != 0
    }

    /// Whether gf_notifications keeps and orders what the engine writes as
    /// written, so that a tap's copy is what reading it back gives: no
    /// trigger names it (`notificationsHaveTriggers`), and its columns have
    /// the types the engine made them with and no collation (a table rebuilt
    /// by hand with `accuracy_m INTEGER` stores 5.0 as 5; with `subject_id
    /// COLLATE NOCASE` it orders "B" before "a").
    public static func storedAsWritten(_ db: Connection) throws -> Bool {
        guard try !notificationsHaveTriggers(db) else { return false }
        let types = try db.query("SELECT upper(type) FROM pragma_table_info('gf_notifications') ORDER BY cid").map { $0.first?.string ?? "" }
        let sql = try db.scalar("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'gf_notifications'").string ?? ""
        return types == ["INTEGER", "INTEGER", "TEXT", "TEXT", "TEXT", "INTEGER", "TEXT", "REAL", "REAL", "REAL"]
            && !sql.uppercased().contains("COLLATE")
    }
}
