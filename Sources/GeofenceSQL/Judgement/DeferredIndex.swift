/// The index `gf_notifications_by_subject`, left out while a large batch
/// fills an empty gf_notifications and built once at the end of the run.
///
/// SQLite builds an index from a sort of the finished table for less than
/// it costs to keep one up to date row by row. This is done only when
/// nobody can tell: the table is empty (nothing to query by subject while
/// the run's own transaction is open), no trigger of anyone's is on the
/// table (a trigger could read through the index, and must see every row
/// as it goes in), and the index is rebuilt from its own stored text in the
/// same transaction, so a run that fails leaves the index as it was.
final class DeferredIndex {
    private let db: Connection
    private let sql: String

    private init(_ db: Connection, sql: String) { self.db = db; self.sql = sql }

    /// Drops the index if all of the above holds; nil when it stays.
    static func dropIfUnseen(_ db: Connection) throws -> DeferredIndex? {
        let name = "gf_notifications_by_subject"
        guard try !NotificationTap.notificationsHaveTriggers(db),
              try db.scalar("SELECT NOT EXISTS (SELECT 1 FROM gf_notifications)").int64 == 1,
              let sql = try db.scalar("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", [.text(name)]).string
        else { return nil }
        // SQLite refuses to drop while a statement of the connection is
        // still reading (a batch spilled to a temporary table is read by one
        // while it is judged): the index then simply stays, kept up to date.
        do { try db.execute("DROP INDEX \(name)") } catch is SQLiteError { return nil }
        return DeferredIndex(db, sql: sql)
    }

    /// Builds the index again, as it was defined.
    func restore() throws { try db.execute(sql) }
}
