import CSQLite
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Refuses a gf_check call made while a statement that reads or writes
/// gf_notifications, the table each call adds its notifications to, is
/// stepping on the connection.
///
///     SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM gf_notifications;   -- refused
///     UPDATE gf_notifications SET lat = lat WHERE gf_check(…) IS NOT NULL;            -- refused
///     CREATE TEMP TABLE again AS SELECT * FROM gf_notifications;                     -- copy first,
///     SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM again;              -- then judge the copy
///
/// Why: SQLite lets a statement see rows its own connection writes while it
/// is stepping. Scanning gf_notifications — to select, update or delete its
/// rows — the statement meets the rows its calls have just added, judges
/// them, adds more, and never ends (the trial that found it grew the file by
/// 5 GB in 2 minutes). The rows a statement would reach are not knowable from
/// inside a call, so the call is refused before it writes anything, with how
/// to do it instead.
///
/// How: each statement still stepping on the connection (the one calling,
/// and any other left unfinished, which would see the new rows too) is
/// compiled once with EXPLAIN. It is refused when its program touches, in the
/// main database, the b-tree of gf_notifications or of one of its indexes:
/// opens it to read (OpenRead, ReopenIdx) or to write (OpenWrite: UPDATE and
/// DELETE scan the table through it, INSERT appends through it), or empties
/// it (Clear). Views, subqueries, CTEs and the triggers a statement fires
/// are compiled into the same program, so each is found as well. A statement
/// that only copies the table into a sorter or temporary b-tree first still
/// opens the table, and is refused too: one rule, no reasoning about when a
/// copy is complete. A table of the same name in another database (an
/// ATTACHed copy, a TEMP table) is not the one gf_check writes, and is allowed.
///
/// The verdict is kept per statement, valid while four things stay as they
/// were: its SQL text, how often SQLite re-prepared it (a schema change
/// recompiles a statement in place, under the same pointer and text), and
/// the schema versions of main and temp (a statement finalized and a new one
/// of the same text prepared at the same address after a view was
/// redefined). A call from a statement already seen costs two schema
/// version reads, a pointer and a text comparison.
final class OutputReaders {
    private let db: Connection
    private let function: String
    private let table: String
    /// Verdicts: statement → what it was judged under, and whether it touches the table.
    private var seen: [OpaquePointer: Verdict] = [:]
    private var schemaVersion: Statement?
    private var tempSchemaVersion: Statement?

    private struct Verdict {
        var sql: [CChar]
        var reprepares: Int32
        var schema: Int64
        var touches: Bool
    }

    init(_ db: Connection, function: String, table: String) { self.db = db; self.function = function; self.table = table }

    /// Finalizes the statements it keeps, so the connection can close.
    func close() { schemaVersion = nil; tempSchemaVersion = nil; seen.removeAll() }

    /// Throws, saying what to do instead, when a statement stepping on this
    /// connection reads or writes the table; returns otherwise, having
    /// written nothing.
    func refuseReaders() throws {
        let api = sqlite.pointee
        var schema: Int64?
        var s = api.next_stmt!(db.handle, nil)
        while let stmt = s {
            if api.stmt_busy!(stmt) != 0, let sql = api.sql!(stmt) {
                if schema == nil { schema = try schemaStamp() }
                if try touches(stmt, sql, schema: schema!) {
                    throw FunctionError("\(function): this statement reads gf_notifications or writes it (SELECT, UPDATE, "
                                        + "DELETE or INSERT over \(table), a view, subquery or trigger of it), where each "
                                        + "\(function) call adds its notifications, so it would meet the rows its own calls "
                                        + "write and never end; copy the rows first and judge the copy: CREATE TEMP TABLE "
                                        + "fixes AS SELECT … FROM \(table); SELECT \(function)(…) FROM fixes")
                }
            }
            s = api.next_stmt!(db.handle, stmt)
        }
    }

    /// Whether `stmt`, whose SQL text is `sql`, touches the table: the kept
    /// verdict if it was reached under the same text, program and schema.
    private func touches(_ stmt: OpaquePointer, _ sql: UnsafePointer<CChar>, schema: Int64) throws -> Bool {
        let reprepares = sqlite.pointee.stmt_status!(stmt, SQLITE_STMTSTATUS_REPREPARE, 0)
        if let known = seen[stmt], known.reprepares == reprepares, known.schema == schema,
           known.sql.withUnsafeBufferPointer({ strcmp($0.baseAddress!, sql) == 0 }) {
            return known.touches
        }
        let text = String(cString: sql)
        let verdict = try compiledTouches(text)
        if seen.count > 64 { seen.removeAll() }   // statements finalized long ago: their addresses are reused
        seen[stmt] = Verdict(sql: Array(text.utf8CString), reprepares: reprepares, schema: schema, touches: verdict)
        return verdict
    }

    /// The schema versions of main and temp as one number: any change of
    /// either (a view or trigger created, dropped or replaced) changes it.
    private func schemaStamp() throws -> Int64 {
        if schemaVersion == nil { schemaVersion = try db.prepare("PRAGMA main.schema_version") }
        if tempSchemaVersion == nil { tempSchemaVersion = try db.prepare("PRAGMA temp.schema_version") }
        func first(_ s: Statement) throws -> Int64 {
            defer { s.reset() }
            return try s.step() ? s.value(0).int64 ?? 0 : 0
        }
        return try first(schemaVersion!) &* 4_294_967_296 &+ first(tempSchemaVersion!)
    }

    /// Whether the program EXPLAIN gives for `sql` touches the b-tree of the
    /// table or of one of its indexes in the main database. SQL that EXPLAIN
    /// cannot compile (already an EXPLAIN, say) is taken as not touching it.
    private func compiledTouches(_ sql: String) throws -> Bool {
        let roots = Set(try db.query("SELECT rootpage FROM main.sqlite_master WHERE tbl_name = ?1 COLLATE NOCASE AND rootpage > 0",
                                     [.text(table)]).compactMap { $0.first?.int64 })
        guard !roots.isEmpty, let program = try? db.prepare("EXPLAIN " + sql) else { return false }
        // EXPLAIN's columns: addr, opcode, p1, p2, p3, p4, p5, comment. The cursor openers name
        // the b-tree's root page in p2 and its database in p3 (0 is main); Clear names them in p1 and p2.
        while try program.step() {
            let root: Int64?, database: Int64?
            switch program.value(1).string {
            case "OpenRead", "ReopenIdx": (root, database) = (program.value(3).int64, program.value(4).int64)
            // An OpenWrite with p5's 0x10 (OPFLAG_P2ISREG) holds the root in a register: a table the statement creates.
            case "OpenWrite" where (program.value(6).int64 ?? 0) & 0x10 == 0: (root, database) = (program.value(3).int64, program.value(4).int64)
            case "Clear": (root, database) = (program.value(2).int64, program.value(3).int64)
            default: continue
            }
            if database == 0, let root, roots.contains(root) { return true }
        }
        return false
    }
}
