import CSQLite
import GeofenceCore
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Refuses a gf_check call made while a statement that reads or writes
/// gf_notifications (the view of gf_notification_rows, the table each call
/// adds its notifications to) is stepping on the connection.
///
///     SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM gf_notifications;   -- refused
///     DELETE FROM gf_notifications WHERE gf_check(…) IS NOT NULL;                     -- refused
///     CREATE TEMP TABLE again AS SELECT * FROM gf_notifications;                     -- copy first,
///     SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM again;              -- then judge the copy
///
/// Why: SQLite lets a statement see rows its own connection writes while it
/// is stepping. Scanning gf_notifications — to select, update or delete its
/// rows — the statement meets the rows its calls have just added, judges
/// them, adds more, and never ends, until the disk is full. The rows a statement would reach are not knowable from
/// inside a call, so the call is refused before it writes anything, with how
/// to do it instead.
///
/// How: each statement still stepping on the connection (the one calling,
/// and any other left unfinished, which would see the new rows too) is
/// compiled once with EXPLAIN. It is refused when its program touches the
/// b-tree of gf_notification_rows (main's, which the calls write, or a TEMP
/// table of that name, which the statement may take for it) or of one of its indexes:
/// opens it to read (OpenRead, ReopenIdx) or to write (OpenWrite: UPDATE and
/// DELETE scan the table through it, INSERT appends through it), or empties
/// it (Clear). Views, subqueries, CTEs and the triggers a statement fires
/// are compiled into the same program, so each is found as well. A statement
/// that only copies the table into a sorter or temporary b-tree first still
/// opens the table, and is refused too: one rule, no reasoning about when a
/// copy is complete. A table of the same name in an ATTACHed database is not
/// the one gf_check writes, and is allowed.
///
/// The verdict is kept per statement, valid while four things stay as they
/// were: its SQL text, how often SQLite re-prepared it (a schema change
/// recompiles a statement in place, under the same pointer and text), and
/// the schema versions of main and temp (a statement finalized and a new one
/// of the same text prepared at the same address after a view was
/// redefined; the session reads both versions in every call anyway). A call
/// from a statement already seen costs a pointer and a text comparison.
final class OutputReaders {
    private let db: Connection
    private let function: String
    private let table: String
    /// Verdicts: statement → what it was judged under, and whether it touches the table.
    private var seen: [OpaquePointer: Verdict] = [:]
    /// Verdicts kept beyond the running statements' before those of statements not running go.
    static let keptVerdicts = 64

    private struct Verdict {
        var sql: [CChar]
        var reprepares: Int32
        var schema: Int64
        var touches: Bool
    }

    init(_ db: Connection, function: String, table: String) { self.db = db; self.function = function; self.table = table }

    /// Forgets the verdicts: the connection is closing.
    func close() { seen.removeAll() }

    /// Throws, saying what to do instead, when a statement stepping on this
    /// connection now reads or writes the table; returns otherwise, having
    /// written nothing. `schema` is the schema versions of main and temp as
    /// one number, read in this call (`Session.schema`: any change of either,
    /// a view or trigger created, dropped or replaced, changes it).
    func refuseReaders(schema: Int64) throws {
        // What each running statement is, read in one walk that runs no code of
        // the user's: compiling one (EXPLAIN) asks the connection's authorizer,
        // which may finalize a statement, so no pointer is followed after.
        // A statement already found not to touch the table, under the same
        // text, program and schema, is passed in the walk (no copy of its text).
        let api = sqlite.pointee
        var running: [(stmt: OpaquePointer, sql: [CChar], reprepares: Int32)] = []
        var busy = 0
        var s = api.next_stmt!(db.handle, nil)
        while let stmt = s {
            if api.stmt_busy!(stmt) != 0, let sql = api.sql!(stmt) {
                busy += 1
                let reprepares = api.stmt_status!(stmt, SQLITE_STMTSTATUS_REPREPARE, 0)
                if !isKnownClear(stmt, sql, reprepares: reprepares, schema: schema) {
                    running.append((stmt, Array(UnsafeBufferPointer(start: sql, count: strlen(sql) + 1)), reprepares))
                }
            }
            s = api.next_stmt!(db.handle, stmt)
        }
        // A statement the user's code finalized meanwhile (while another was compiled) reads nothing any more.
        for r in running where try touches(r.stmt, r.sql, reprepares: r.reprepares, schema: schema) && stillRunning(r.stmt, r.sql) {
            // Which statement is the caller SQLite does not say: the text names it.
            let text = Echo.plain(String(decoding: r.sql.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                .split(whereSeparator: \.isWhitespace).joined(separator: " "))
            throw FunctionError("\(function): this statement, or another left running on this connection, reads gf_notifications "
                                + "or writes it (SELECT, UPDATE, DELETE or INSERT over it, its rows \(table), a view, subquery or "
                                + "trigger of them): `\(text)`; each \(function) call adds its notifications, so it would meet "
                                + "the rows its own calls write and never end. Another statement (a cursor not read to its end): "
                                + "finish or reset it first. This one: copy the rows first and judge the copy: CREATE TEMP TABLE "
                                + "fixes AS SELECT … FROM gf_notifications; SELECT \(function)(…) FROM fixes")
        }
        // Verdicts of statements no longer running go (their addresses are
        // reused); those of the running ones stay, however many there are:
        // clearing them all would compile every one again at every call.
        if seen.count > Self.keptVerdicts + busy {
            let now = db.runningStatements()
            seen = seen.filter { now.contains($0.key) }
        }
    }

    /// Whether the kept verdict of `stmt`, reached under the text `sql` (the
    /// statement's own, read in the walk), the same program and schema, is
    /// that it does not touch the table.
    @inline(__always)
    private func isKnownClear(_ stmt: OpaquePointer, _ sql: UnsafePointer<CChar>, reprepares: Int32, schema: Int64) -> Bool {
        guard let known = seen[stmt], !known.touches, known.reprepares == reprepares, known.schema == schema else { return false }
        return known.sql.withUnsafeBufferPointer { strcmp($0.baseAddress!, sql) == 0 }
    }

    /// Whether a statement at `stmt` with the text `sql` is running on the
    /// connection now: `stmt` is followed only once the connection's list
    /// shows it (it may have been finalized).
    private func stillRunning(_ stmt: OpaquePointer, _ sql: [CChar]) -> Bool {
        guard db.runningStatements().contains(stmt), let live = sqlite.pointee.sql!(stmt) else { return false }
        return strcmp(live, sql) == 0
    }

    /// Whether the statement at `stmt`, whose SQL text (with its NUL) is
    /// `sql`, touches the table: the kept verdict if it was reached under the
    /// same text, program and schema, else compiled now. `stmt` is a key
    /// only: never followed (compiling may have finalized it).
    private func touches(_ stmt: OpaquePointer, _ sql: [CChar], reprepares: Int32, schema: Int64) throws -> Bool {
        if let known = seen[stmt], known.reprepares == reprepares, known.schema == schema, known.sql == sql {
            return known.touches
        }
        let verdict = try compiledTouches(String(cString: sql))
        seen[stmt] = Verdict(sql: sql, reprepares: reprepares, schema: schema, touches: verdict)
        return verdict
    }

    /// Whether `sql` is itself an EXPLAIN (or EXPLAIN QUERY PLAN) statement.
    static func isExplain(_ sql: String) -> Bool {
        let words = sql.drop { $0.isWhitespace }.prefix(8).uppercased()
        return words.hasPrefix("EXPLAIN") && (words.count == 7 || !(words.dropFirst(7).first!.isLetter || words.dropFirst(7).first! == "_"))
    }

    /// The columns of an EXPLAIN's program, as SQLite gives them.
    private enum Program: Int, NamedColumns { case addr, opcode, p1, p2, p3, p4, p5, comment }

    /// Whether the program EXPLAIN gives for `sql` touches the b-tree of the
    /// table the calls write or of one of its indexes. An EXPLAIN statement
    /// itself runs no program (its EXPLAIN does not compile): it touches
    /// nothing. Any other failure to compile is an error, never a pass: the
    /// guard must not open for a statement it could not see.
    private func compiledTouches(_ sql: String) throws -> Bool {
        guard let (database, roots) = try writtenBTrees() else { return false }
        if Self.isExplain(sql) { return false }
        let program = try db.prepare("EXPLAIN " + sql)
        // The cursor openers name the b-tree's root page in p2 and its database
        // in p3 (0 is main, 1 temp); Clear names them in p1 and p2.
        while try program.step() {
            let root: Int64?, opened: Int64?
            let (p1, p2, p3) = (program.value(Program.p1).int64, program.value(Program.p2).int64, program.value(Program.p3).int64)
            switch program.value(Program.opcode).string {
            case "OpenRead", "ReopenIdx": (root, opened) = (p2, p3)
            // An OpenWrite with p5's 0x10 (OPFLAG_P2ISREG) holds the root in a register: a table the statement creates.
            case "OpenWrite" where (program.value(Program.p5).int64 ?? 0) & 0x10 == 0: (root, opened) = (p2, p3)
            case "Clear": (root, opened) = (p1, p2)
            default: continue
            }
            if opened == database, let root, roots.contains(root) { return true }
        }
        return false
    }

    /// The database number and the root pages (the table's and its indexes')
    /// of the table the calls write. Their SQL names it without a database,
    /// and SQLite looks such a name up in temp before main: a TEMP table of
    /// that name would take the calls' rows, so it is the one to guard.
    private func writtenBTrees() throws -> (database: Int64, roots: Set<Int64>)? {
        for (database, schema) in [(Int64(1), "temp"), (Int64(0), "main")] {
            let roots = Set(try db.query("SELECT rootpage FROM \(schema).sqlite_master WHERE tbl_name = ?1 COLLATE NOCASE AND rootpage > 0",
                                         [.text(table)]).compactMap { $0.first?.int64 })
            if !roots.isEmpty { return (database, roots) }
        }
        return nil
    }
}
