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

    /// The last error's extended result code (SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_…),
    /// which tells apart what the primary code does not.
    var extendedErrorCode: Int32 { sqlite.pointee.extended_errcode!(handle) }

    func error(_ rc: Int32, _ sql: String?) -> SQLiteError {
        let extended = extendedErrorCode
        var message = errorMessage
        // A constraint or RAISE in a user's trigger comes back as this statement's error.
        if rc & 0xff == SQLITE_CONSTRAINT || rc & 0xff == SQLITE_ERROR, let hint = userTriggerHint(for: sql) { message += hint }
        return SQLiteError(code: extended & 0xff == rc & 0xff ? extended : rc, message: message, sql: sql,
                           systemErrno: sqlite.pointee.system_errno!(handle))
    }

    func check(_ rc: Int32, _ sql: String? = nil) throws {
        if rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE { throw error(rc, sql) }
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite.pointee.exec!(handle, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            var e = error(rc, sql)
            if let err { e.message = String(cString: err); sqlite.pointee.free!(err) }
            throw e
        }
    }

    public func prepare(_ sql: String) throws -> Statement {
        var stmt: OpaquePointer?
        let rc = sqlite.pointee.prepare_v2!(handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, sql) }
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
    /// True when `main` cannot be written (opened read-only, or a file SQLite could only open for reading).
    public var isReadOnly: Bool { sqlite.pointee.db_readonly!(handle, "main") == 1 }
    public var changes: Int { Int(sqlite.pointee.changes!(handle)) }

    /// The rowid of the row the last completed INSERT on this connection added.
    public var lastInsertRowid: Int64 { sqlite.pointee.last_insert_rowid!(handle) }

    /// All of `body` or none of it. BEGIN IMMEDIATE takes the write lock at the
    /// start, so a concurrent writer waits (busy timeout) or fails before any work.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try transaction(aroundCommit: { try $0() }, body)
    }

    /// `transaction`, its COMMIT run by `around` (which must call it once),
    /// for what must happen with the COMMIT (judge's output is accounted
    /// for with its signals held).
    ///
    /// An `Interruption` requested before the COMMIT rolls it back instead;
    /// the observer is told of the transaction's beginning and end, and runs
    /// the COMMIT itself (the CLI holds its signals across it: a process
    /// ended during a COMMIT, which in WAL mode also checkpoints, could not
    /// tell whether its changes were committed).
    public func transaction<T>(aroundCommit around: (() throws -> Void) throws -> Void, _ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        Interruption.observer?.began()
        var committed = false
        do {
            let result = try body()
            try around {
                if Interruption.isRequested { throw Interruption.error("COMMIT") }
                let commit = {
                    try self.execute("COMMIT")
                    committed = true
                    Interruption.observer?.ended(true)
                }
                try Interruption.observer.map { try $0.committing(commit) } ?? commit()
            }
            return result
        } catch {
            if !committed {
                try? execute("ROLLBACK")
                Interruption.observer?.ended(false)
            }
            throw error
        }
    }

    /// Inside `transaction`'s body: commits what the body wrote so far and
    /// begins the next transaction, which `transaction` goes on with (a run
    /// committed chunk by chunk, `Judgement.runResumable`). The COMMIT goes
    /// through the observer as `transaction`'s own does (the CLI holds its
    /// signals across it), and an `Interruption` requested before it rolls
    /// the chunk back instead. A failed COMMIT leaves the body to throw and
    /// `transaction` to roll back what was not committed.
    public func commitAndContinue() throws {
        if Interruption.isRequested { throw Interruption.error("COMMIT") }
        let commit = {
            try self.execute("COMMIT")
            Interruption.observer?.ended(true)
        }
        try Interruption.observer.map { try $0.committing(commit) } ?? commit()
        try execute("BEGIN IMMEDIATE")
        Interruption.observer?.began()
    }

    /// True when SpatiaLite's functions are available in this connection.
    public var hasSpatiaLite: Bool {
        (try? scalar("SELECT spatialite_version()")).map { !$0.isNull } ?? false
    }
}
