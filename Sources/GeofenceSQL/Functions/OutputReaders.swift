import CSQLite
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Refuses a gf_check call made by a statement that reads gf_notifications,
/// the table each call adds its notifications to.
///
///     SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM gf_notifications;   -- refused
///     CREATE TEMP TABLE again AS SELECT * FROM gf_notifications;                     -- copy first,
///     SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM again;              -- then judge the copy
///
/// Why: SQLite lets a statement see rows its own connection writes while it
/// is stepping. Scanning gf_notifications, the statement meets the rows its
/// calls have just added, judges them, adds more, and never ends (the trial
/// that found it grew the file by 5 GB in 2 minutes). The rows a statement
/// would reach are not knowable from inside a call, so the call is refused
/// before it writes anything, with how to do it instead.
///
/// How: each statement still stepping on the connection (the one calling,
/// and any other left unfinished, which would see the new rows too) is
/// compiled once with EXPLAIN; it reads the table when its program opens,
/// in the main database, the b-tree of gf_notifications or of one of its
/// indexes (views, subqueries and CTEs are compiled into the same program,
/// so a view over the table is found as well). The verdict is kept per
/// statement and SQL text, so a call from a statement already seen costs a
/// pointer and a text comparison.
final class OutputReaders {
    private let db: Connection
    private let function: String
    private let table: String
    /// Verdicts: statement → (its SQL text, as SQLite holds it; whether it reads the table).
    private var seen: [OpaquePointer: (sql: [CChar], reads: Bool)] = [:]

    init(_ db: Connection, function: String, table: String) { self.db = db; self.function = function; self.table = table }

    /// Throws, saying what to do instead, when a statement stepping on this
    /// connection reads the table; returns otherwise, having written nothing.
    func refuseReaders() throws {
        let api = sqlite.pointee
        var s = api.next_stmt!(db.handle, nil)
        while let stmt = s {
            if api.stmt_busy!(stmt) != 0, let sql = api.sql!(stmt), try reads(stmt, sql) {
                throw FunctionError("\(function): this statement reads \(table), where each \(function) call adds its notifications, "
                                    + "so it would meet the rows its own calls write and never end; copy the rows first and "
                                    + "judge the copy: CREATE TEMP TABLE fixes AS SELECT … FROM \(table); "
                                    + "SELECT \(function)(…) FROM fixes")
            }
            s = api.next_stmt!(db.handle, stmt)
        }
    }

    /// Whether `stmt`, whose SQL text is `sql`, reads the table (kept per statement and text).
    private func reads(_ stmt: OpaquePointer, _ sql: UnsafePointer<CChar>) throws -> Bool {
        if let known = seen[stmt], known.sql.withUnsafeBufferPointer({ strcmp($0.baseAddress!, sql) == 0 }) { return known.reads }
        let text = String(cString: sql)
        let verdict = try compiledReads(text)
        if seen.count > 64 { seen.removeAll() }   // statements finalized long ago: their addresses are reused
        seen[stmt] = (Array(text.utf8CString), verdict)
        return verdict
    }

    /// Whether the program EXPLAIN gives for `sql` opens the table or one of
    /// its indexes in the main database for reading. SQL that EXPLAIN cannot
    /// compile (already an EXPLAIN, say) is taken as not reading it.
    private func compiledReads(_ sql: String) throws -> Bool {
        let roots = Set(try db.query("SELECT rootpage FROM main.sqlite_master WHERE tbl_name = ?1 COLLATE NOCASE AND rootpage > 0",
                                     [.text(table)]).compactMap { $0.first?.int64 })
        guard !roots.isEmpty, let program = try? db.prepare("EXPLAIN " + sql) else { return false }
        // EXPLAIN's columns: addr, opcode, p1, p2 (the b-tree's root page), p3 (the database: 0 is main), p4, p5, comment.
        while try program.step() {
            if program.value(1).string == "OpenRead", program.value(4).int64 == 0,
               let root = program.value(3).int64, roots.contains(root) {
                return true
            }
        }
        return false
    }
}
