import CSQLite

/// One call of a state-changing SQL function (gf_check) as one transaction:
/// everything it writes happens, or none of it does.
///
///     SELECT gf_check('walker', '2026-11-20T09:00:00Z', 35.68, 139.76, 10);  -- autocommit: its own BEGIN IMMEDIATE … COMMIT
///     BEGIN IMMEDIATE;                                                         -- a table of fixes: one write lock for all
///     SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM ordered ORDER BY rowid;
///     COMMIT;                                                                  -- each call a savepoint inside it
///
/// How it works. A function's own statements would each commit on their own
/// in autocommit (the statement calling the function only reads), so a kill
/// or a failed write between them would leave a subject advanced without
/// its notifications. So, by where the call stands:
/// - autocommit, no write statement running: `BEGIN IMMEDIATE` … `COMMIT`.
///   The write lock is taken before the subject is read, so two writers of
///   one subject are serialised and a waiting one honours the busy timeout;
/// - inside the caller's transaction: `SAVEPOINT` … `RELEASE`, and on any
///   error `ROLLBACK TO` it, so a failed call leaves the transaction as it
///   found it;
/// - inside a statement that writes (`INSERT … SELECT gf_check(…)`, `CREATE
///   TABLE … AS`), SQLite opens no savepoint. In autocommit that statement's
///   own transaction is all or nothing (an error rolls all of it back), so
///   the call runs as it is; inside the caller's transaction nothing would
///   undo half a call, so it is refused.
///
/// journal_mode=OFF keeps no journal, so neither ROLLBACK nor ROLLBACK TO can
/// undo half a call: a call is refused in that mode rather than risk a subject
/// advanced without its notifications.
///
/// A call inside a call. A TEMP trigger of the user's on a table the call
/// writes (gf_notification_rows, say) may itself call the function: that inner
/// call would run inside the outer call's own transaction and its writing
/// statement, where nothing could undo half of it. It is refused, saying
/// so; the outer call then fails with the inner call's message as it is (not
/// prefixed again) and writes nothing.
///
/// A rolled-back transaction. Some failures end the caller's whole
/// transaction, not just the statement: a trigger's `RAISE(ROLLBACK, …)`, a
/// full disk or memory while SQLite spills its cache. The error then says so,
/// because everything since the caller's BEGIN is gone and must be retried
/// from there, not just this call.
///
/// Busy. Inside a read snapshot the caller already holds (a `SELECT … FROM t`
/// still stepping, or a deferred `BEGIN` that has read), SQLite cannot wait
/// for another writer: it reports SQLITE_BUSY at once, or SQLITE_BUSY_SNAPSHOT
/// once another connection has committed, which no waiting clears. Both come
/// back as SQLITE_BUSY errors that say to end the statement or transaction
/// and retry it; every statement the call used is reset, so the connection
/// holds no stale snapshot afterwards.
///
/// A transaction that has not read yet (a deferred `BEGIN`, as Python's
/// `autocommit=False` opens one after every commit) holds no snapshot, so
/// it can wait: the call would otherwise read the subject first, making a
/// snapshot, and its first write would then meet another writer's lock at
/// once. So there the call first takes `main`'s write lock with a statement
/// that writes nothing, which SQLite lets wait up to the busy timeout, as
/// `BEGIN IMMEDIATE` does.
final class CallTransaction {
    private let db: Connection
    private let function: String
    /// Prepared once: parsing these four statements anew would cost every call.
    private lazy var begin = try? db.prepare("BEGIN IMMEDIATE")
    private lazy var commit = try? db.prepare("COMMIT")
    private lazy var savepoint = try? db.prepare("SAVEPOINT gf_call")
    private lazy var release = try? db.prepare("RELEASE gf_call")
    private lazy var journalMode = try? db.prepare("PRAGMA main.journal_mode")
    /// Writes nothing, but begins a write transaction on `main` (`takeWriteLock`);
    /// nil while main has no such table (the call then says what is missing).
    private var writeLock: Statement?

    /// Where the running call began, as to changes not its own that may be
    /// pending, to be undone later (`CallStart`).
    private(set) var start = CallStart.insideWritingStatement

    /// Whether a call is running on this connection, and whether a call made
    /// inside it (from a trigger) was refused.
    private var running = false
    /// The running call's function (`run(as:)`): whose call a refused inner one was made in.
    private var runningFunction = ""
    /// Whether a call is running on this connection (a call made now comes from inside it).
    var isRunning: Bool { running }
    private var refusedInner = false

    init(_ db: Connection, function: String) { self.db = db; self.function = function }

    /// Finalizes the statements, so the connection can close.
    func close() { begin = nil; commit = nil; savepoint = nil; release = nil; journalMode = nil; writeLock = nil }

    /// Runs `body` as one call of `name` (default: the function this
    /// transaction was made for; functions sharing one, as gf_check and
    /// gf_check_stream share the session's, name themselves), all of what it
    /// writes or none; every refusal names `name`. A call made while another
    /// runs on the connection (from the user's TEMP trigger on a table the
    /// outer call writes) is refused; the outer call then fails with that
    /// refusal's own message.
    func run<T>(as name: String? = nil, _ body: () throws -> T) throws -> T {
        let function = name ?? self.function
        if running {
            refusedInner = true
            let outer = runningFunction == function ? "another \(function)" : "a \(runningFunction)"
            throw FunctionError("\(function): cannot be called from a trigger on a table \(runningFunction) writes (a TEMP trigger of yours "
                                + "on gf_subject_state, say), which runs inside \(outer) call and its transaction, where "
                                + "nothing could undo half of this one: have the trigger store what it needs in a table of yours, "
                                + "and call \(function) on those rows in a statement of its own")
        }
        running = true
        runningFunction = function
        refusedInner = false
        defer { running = false }
        do {
            return try runAlone(function, body)
        } catch let e as SQLiteError where refusedInner {
            // The inner refusal, come back as the error of the outer call's write (with
            // the names of the user's triggers that ran): already prefixed with the function's name.
            throw FunctionError(e.message, code: e.code)
        }
    }

    private func runAlone<T>(_ function: String, _ body: () throws -> T) throws -> T {
        // Walked once (every statement of the connection): nothing below starts or ends a writing statement of the caller's.
        let insideWritingStatement = db.hasWriteStatementRunning
        start = insideWritingStatement ? .insideWritingStatement
            : sqlite.pointee.txn_state!(db.handle, "main") == SQLITE_TXN_WRITE ? .insideWriteTransaction : .clean
        // Before anything is read: inside the caller's transaction, the call's first read (the journal mode's, even) opens the snapshot.
        let snapshot = db.holdsReadSnapshot
        if !db.isAutocommit && !snapshot && !insideWritingStatement {
            do { try takeWriteLock() } catch { throw Self.busy(error, function: function, insideSnapshot: false) }
        }
        if try journalIsOff() {
            throw FunctionError("\(function): the database's journal_mode is OFF, in which SQLite cannot undo a call that fails "
                                + "half way (half its writes could be kept): use PRAGMA journal_mode = WAL (or DELETE)")
        }
        if insideWritingStatement {
            if db.isAutocommit { return try body() }
            throw FunctionError("\(function): cannot run inside a statement that writes (INSERT … SELECT, UPDATE, CREATE TABLE … AS) "
                                + "within an open transaction, where SQLite allows no savepoint to undo half a call: "
                                + "select \(function)(…) on its own and store its result with a second statement")
        }
        if db.isAutocommit {
            do { try step(begin, "BEGIN IMMEDIATE") } catch {
                throw Self.busy(error, function: function, insideSnapshot: snapshot)
            }
            do {
                let result = try body()
                try step(commit, "COMMIT")
                return result
            } catch {
                if !db.isAutocommit { try? db.execute("ROLLBACK") }
                throw Self.busy(error, function: function, insideSnapshot: snapshot)
            }
        }
        try step(savepoint, "SAVEPOINT gf_call")
        do {
            let result = try body()
            try step(release, "RELEASE gf_call")
            return result
        } catch {
            // SQLite may have ended the caller's whole transaction with the error.
            if db.isAutocommit { throw Self.transactionLost(error, function: function) }
            try? db.execute("ROLLBACK TO gf_call")
            try? db.execute("RELEASE gf_call")
            throw Self.busy(error, function: function, insideSnapshot: snapshot)
        }
    }

    /// Begins the caller's transaction as a write transaction on `main`, before
    /// anything is read, waiting for another writer up to the busy timeout: a
    /// writing statement that starts with no read transaction open is the one
    /// kind SQLite lets wait (SQLITE_BUSY after the timeout). One that has no
    /// table to name (not a catalog) does nothing; the call then fails saying so.
    private func takeWriteLock() throws {
        if writeLock == nil { writeLock = try? db.prepare("DELETE FROM main.gf_subject_state WHERE 0") }
        guard let writeLock else { return }
        try step(writeLock, "")
    }

    private func journalIsOff() throws -> Bool {
        guard let journalMode else { return false }
        try journalMode.bind([])
        defer { journalMode.reset() }
        return try journalMode.step() && journalMode.value(0).string == "off"
    }

    /// `error` with what the caller must now do: its transaction is gone.
    static func transactionLost(_ error: Error, function: String) -> Error {
        // A FunctionError's message names its function already (the registry passes it on as it is); SQLite's does not.
        let (message, code): (String, Int32) = switch error {
        case let e as SQLiteError: ("\(function): \(e.message)", e.code)
        case let e as FunctionError: (e.message, e.code)
        default: ("\(function): \(error)", SQLITE_ERROR)
        }
        return FunctionError("\(message); SQLite rolled back the whole transaction this call ran in (a trigger's "
                             + "RAISE(ROLLBACK), a full disk or memory): nothing since its BEGIN was kept, so retry the "
                             + "transaction from its BEGIN", code: code)
    }

    /// Runs a prepared transaction statement (or `sql` itself, if it could not be prepared).
    private func step(_ statement: Statement?, _ sql: String) throws {
        guard let statement else { return try db.execute(sql) }
        try statement.bind([])
        while try statement.step() {}
        statement.reset()
    }

    /// `error`, or for SQLITE_BUSY an error that says what the caller must do.
    static func busy(_ error: Error, function: String, insideSnapshot: Bool) -> Error {
        guard let e = error as? SQLiteError, e.code & 0xff == SQLITE_BUSY else { return error }
        let what: String
        if e.code == SQLITE_BUSY | 2 << 8 {  // SQLITE_BUSY_SNAPSHOT (a macro Swift does not import)
            what = "another connection wrote to the database after this statement's or transaction's read snapshot began (SQLITE_BUSY_SNAPSHOT); waiting cannot help"
        } else if insideSnapshot {
            what = "another connection is writing, and a statement or transaction holding a read snapshot cannot wait for it (SQLITE_BUSY)"
        } else {
            what = "another connection kept the database locked for writing past the busy timeout (SQLITE_BUSY)"
        }
        return FunctionError("\(function): \(what): end the statement or transaction and retry it; to feed a table of fixes, "
                             + "begin the transaction with BEGIN IMMEDIATE", code: e.code)
    }
}

extension Connection {
    /// True while a statement that writes is running on this connection (the
    /// one calling a function, say): SQLite opens no savepoint then.
    var hasWriteStatementRunning: Bool {
        let api = sqlite.pointee
        var s = api.next_stmt!(handle, nil)
        while let stmt = s {
            if api.stmt_busy!(stmt) != 0 && api.stmt_readonly!(stmt) == 0 { return true }
            s = api.next_stmt!(handle, stmt)
        }
        return false
    }

    /// The statements running on this connection now (the one calling a
    /// function, and any the caller stepped and has not reset). Walked
    /// where it is used: code of the user's that runs inside a call (a trace
    /// callback, a function in a TEMP view) may finalize a statement or
    /// start one, so a list kept from earlier could name a freed statement.
    func runningStatements() -> Set<OpaquePointer> {
        let api = sqlite.pointee
        var all = Set<OpaquePointer>()
        var s = api.next_stmt!(handle, nil)
        while let stmt = s {
            if api.stmt_busy!(stmt) != 0 { all.insert(stmt) }
            s = api.next_stmt!(handle, stmt)
        }
        return all
    }

    /// True when the connection has a read transaction open on `main`.
    var holdsReadSnapshot: Bool { sqlite.pointee.txn_state!(handle, "main") != SQLITE_TXN_NONE }
}
