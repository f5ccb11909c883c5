/// A failed write names the user's own triggers on the table it wrote to.
///
///     UNIQUE constraint failed: queue.area_id; gf_notification_rows has triggers
///     of yours, which ran in this statement: to_queue
///
/// Why: SQLite reports a constraint that fails, or a RAISE, inside a trigger
/// as the error of the statement that fired it (an INSERT into
/// gf_notification_rows), without the trigger's name; a user with several
/// triggers could not tell which one refused the run. The engine's own
/// triggers (known by name and text) are not named.
extension Connection {
    /// "; T has triggers of yours, …" for an INSERT, UPDATE or DELETE whose
    /// table has triggers that are not the engine's; nil otherwise (also if asking fails).
    func userTriggerHint(for sql: String?) -> String? {
        guard let table = sql.flatMap(Self.writtenTable) else { return nil }
        let ask = """
            SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE
            UNION ALL
            SELECT name, sql FROM sqlite_temp_master WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE
            ORDER BY 1
            """
        guard let rows = try? query(ask, [.text(table)]) else { return nil }
        // The engine's own are known by name and text; any other is the user's, whatever its name.
        let names = rows.compactMap { row -> String? in
            guard let name = row.first?.string else { return nil }
            return row.count > 1 && Self.engineTriggers[name] == row[1].string ? nil : name
        }
        guard !names.isEmpty else { return nil }
        return "; \(table) has triggers of yours, which ran in this statement: \(names.joined(separator: ", "))"
    }

    /// Name → CREATE TRIGGER text of every trigger the engine's schema makes.
    static let engineTriggers: [String: String] = Dictionary(
        EmbeddedSQL.migrations.flatMap { EmbeddedSQL.triggers(inMigration: $0.0) }.map { ($0.name, $0.sql) },
        uniquingKeysWith: { _, last in last })

    /// The table an INSERT (or INSERT OR …), UPDATE or DELETE statement
    /// writes, as the engine writes them (`INSERT INTO t (…)`, `UPDATE t SET`,
    /// `DELETE FROM t`, `t` perhaps `main.t`), without its schema; nil for anything else.
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
        return rest.first.map { String($0.split(separator: ".").last ?? Substring($0)) }
    }
}
