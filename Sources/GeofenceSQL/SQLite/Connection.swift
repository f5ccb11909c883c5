import CSQLite

/// A database connection, used through the host's routines table.
///
/// Wraps either a handle this process opened (the CLI) or one SQLite hands a
/// SQL function (`sqlite3_context_db_handle`); it never closes the latter.
public final class Connection {
    public let handle: OpaquePointer
    private let owned: Bool

    public init(borrowing handle: OpaquePointer) { self.handle = handle; self.owned = false }
    public init(owning handle: OpaquePointer) { self.handle = handle; self.owned = true }

    deinit { if owned { _ = sqlite.pointee.close_v2!(handle) } }

    /// The main database's file as SQLite opened it (absolute); nil for an
    /// in-memory or temporary database.
    public var fileName: String? {
        guard let p = sqlite.pointee.db_filename!(handle, "main"), p.pointee != 0 else { return nil }
        return String(cString: p)
    }

    public var errorMessage: String { sqlite.pointee.errmsg!(handle).map { String(cString: $0) } ?? "unknown error" }

    func check(_ rc: Int32, _ sql: String? = nil) throws {
        if rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE {
            throw SQLiteError(code: rc, message: errorMessage, sql: sql)
        }
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite.pointee.exec!(handle, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let message = err.map { String(cString: $0) } ?? errorMessage
            if let err { sqlite.pointee.free!(err) }
            throw SQLiteError(code: rc, message: message, sql: sql)
        }
    }

    public func prepare(_ sql: String) throws -> Statement {
        var stmt: OpaquePointer?
        let rc = sqlite.pointee.prepare_v2!(handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw SQLiteError(code: rc, message: errorMessage, sql: sql) }
        return Statement(stmt, connection: self, sql: sql)
    }

    /// Runs a statement with bound values and returns all rows.
    @discardableResult
    public func query(_ sql: String, _ values: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        let s = try prepare(sql)
        try s.bind(values)
        var rows: [[SQLiteValue]] = []
        while try s.step() { rows.append(s.row) }
        return rows
    }

    public func scalar(_ sql: String, _ values: [SQLiteValue] = []) throws -> SQLiteValue {
        try query(sql, values).first?.first ?? .null
    }

    public var isAutocommit: Bool { sqlite.pointee.get_autocommit!(handle) != 0 }
    public var changes: Int { Int(sqlite.pointee.changes!(handle)) }

    /// All of `body` or none of it. BEGIN IMMEDIATE takes the write lock at the
    /// start, so a concurrent writer waits (busy timeout) or fails before any work.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// True when SpatiaLite's functions are available in this connection.
    public var hasSpatiaLite: Bool {
        (try? scalar("SELECT spatialite_version()")).map { !$0.isNull } ?? false
    }
}
