/// A failed write names the user's own triggers on the table it wrote to.
///
///     UNIQUE constraint failed: queue.area_id; gf_notifications has triggers
///     of yours, which ran in this statement: to_queue
///
/// Why: SQLite reports a constraint that fails, or a RAISE, inside a trigger
/// as the error of the statement that fired it (an INSERT into
/// gf_notifications), without the trigger's name; a user with several
/// triggers could not tell which one refused the run. The engine's own
/// triggers (named gf_…) are not named.
extension Connection {
    /// "; T has triggers of yours, …" for an INSERT, UPDATE or DELETE whose
    /// table has triggers not named gf_…; nil otherwise (also if asking fails).
    func userTriggerHint(for sql: String?) -> String? {
        guard let table = sql.flatMap(Self.writtenTable) else { return nil }
        let ask = """
            SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE AND name NOT LIKE 'gf\\_%' ESCAPE '\\'
            UNION ALL
            SELECT name FROM sqlite_temp_master WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE AND name NOT LIKE 'gf\\_%' ESCAPE '\\'
            ORDER BY 1
            """
        guard let rows = try? query(ask, [.text(table)]), !rows.isEmpty else { return nil }
        let names = rows.compactMap { $0.first?.string }
        return "; \(table) has triggers of yours, which ran in this statement: \(names.joined(separator: ", "))"
    }

    /// The table an INSERT (or INSERT OR …), UPDATE or DELETE statement
    /// writes, as the engine writes them (`INSERT INTO t (…)`, `UPDATE t SET`,
    /// `DELETE FROM t`); nil for anything else.
    static func writtenTable(_ sql: String) -> String? {
        let words = sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "(" }).prefix(5).map { String($0) }
        guard let verb = words.first?.uppercased() else { return nil }
        var rest = words.dropFirst()
        switch verb {
        case "INSERT", "REPLACE":
            while let w = rest.first, w.uppercased() != "INTO" { rest = rest.dropFirst() }
            rest = rest.dropFirst()
        case "UPDATE":
            if rest.first?.uppercased() == "OR" { rest = rest.dropFirst(2) }
        case "DELETE":
            rest = rest.dropFirst()
        default:
            return nil
        }
        return rest.first
    }
}
