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
/// What is stored can differ from what the tap saw when a trigger on
/// gf_notifications changes rows: the caller decides whether a tap's copy
/// stands for the stored rows (`notificationsHaveTriggers`).
public struct NotificationTap {
    public let encode: @Sendable ([Notification]) -> [UInt8]?
    public let write: ([Notification], [UInt8]?) throws -> Void

    public init(encode: @escaping @Sendable ([Notification]) -> [UInt8]?, write: @escaping ([Notification], [UInt8]?) throws -> Void) {
        self.encode = encode
        self.write = write
    }

    /// Whether gf_notifications has a trigger (a user's, in the database or
    /// a temporary one), which may change or remove rows as they are
    /// stored, and sees them as they are: the index cannot be left until
    /// the end, and a tap's copy may not be what was stored.
    public static func notificationsHaveTriggers(_ db: Connection) throws -> Bool {
        try db.scalar("""
            SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'gf_notifications')
                 + (SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger' AND tbl_name = 'gf_notifications')
            """).int64 != 0
    }
}
