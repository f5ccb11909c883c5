import GeofenceCore

/// A copy of a batch's notifications for a caller that also writes them
/// elsewhere (`judge --out`), taken while the run stores them instead of
/// read back from the gf_notifications view once it is done.
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

    /// Whether a trigger of the user's (in the database or a temporary one)
    /// may touch the stored notifications while a run writes them: one on
    /// gf_notification_rows or its dictionaries, or one on any table whose
    /// body changes or reads them (a retention trigger on gf_runs deleting
    /// from the gf_notifications view, say; a chain of triggers ends in one
    /// that names them). A tap's copy may then not be what was stored.
    /// Names are matched as SQLite matches them, without regard to case; the
    /// engine's own triggers (known by name and text) are not counted.
    public static func notificationsHaveTriggers(_ db: Connection) throws -> Bool {
        let rows = try db.query("""
            SELECT name, sql FROM sqlite_master WHERE type = 'trigger'
                AND (sql LIKE '%gf_notification%' OR sql LIKE '%gf_subject_keys%' OR sql LIKE '%gf_area_keys%')
            UNION ALL
            SELECT name, sql FROM sqlite_temp_master WHERE type = 'trigger'
                AND (sql LIKE '%gf_notification%' OR sql LIKE '%gf_subject_keys%' OR sql LIKE '%gf_area_keys%')
            """)
        return rows.contains { row in
            guard let name = row[0].string else { return true }
            return Connection.engineTriggers[name] != row[1].string
        }
    }

    /// Whether reading gf_notifications gives back what the engine wrote, as
    /// written, so that a tap's copy stands for it: no trigger of the user's
    /// touches the rows (`notificationsHaveTriggers`), the stored rows'
    /// columns have the types the engine made them with, and no collation
    /// reorders them (a table rebuilt by hand with `accuracy_m INTEGER`
    /// stores 5.0 as 5; a dictionary with `subject_id COLLATE NOCASE` orders
    /// "B" before "a").
    public static func storedAsWritten(_ db: Connection) throws -> Bool {
        guard try !notificationsHaveTriggers(db) else { return false }
        let types = try db.query("SELECT upper(type) FROM pragma_table_info('gf_notification_rows') ORDER BY cid").map { $0.first?.string ?? "" }
        let collated = try db.scalar("""
            SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE upper(sql) LIKE '%COLLATE%'
                           AND name IN ('gf_notifications', 'gf_notification_rows', 'gf_subject_keys', 'gf_area_keys'))
            """).int64 != 0
        return types == ["INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "REAL", "REAL", "REAL", "INTEGER"]
            && !collated
    }
}
