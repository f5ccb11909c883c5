import GeofenceCore

/// Upgrades that SQL alone cannot write: rows converted by the engine's own
/// rules (a time zone's day, a state record) while a catalog moves to a
/// newer layout.
///
///     -- sql/007_example.sql
///     CREATE TABLE gf_new_rows (…);      -- runs first
///     -- @convert
///     DROP TABLE gf_old_rows;            -- runs after the conversion
///     CREATE VIEW gf_old_rows AS …;
///
/// How it works: a migration holding the line `-- @convert` is run in two
/// parts, with the conversion registered for its version in between
/// (`Schema.apply`); a new catalog runs the same steps over empty tables.
/// Every pending version runs in the one transaction of `Schema.open`, so a
/// conversion that throws leaves the catalog as it was.
///
/// A table a version replaces may carry a user's triggers, which the new
/// layout cannot run (a view takes no AFTER INSERT trigger). Such a catalog
/// is not upgraded: `Schema.open` names every one of them on every table a
/// pending version replaces, with what replaces the table, and changes
/// nothing (`refuseUserTriggers`).
protocol SchemaConversion {
    /// The tables and views this version replaces, each with what a user's
    /// trigger on it should become.
    static var replacedTables: [ReplacedTable] { get }
    /// Moves the rows, inside the upgrade's transaction.
    static func convert(_ db: Connection) throws
}

/// A table or view an upgrade replaces, and what replaces a trigger on it.
struct ReplacedTable {
    var name: String
    /// One sentence for the user whose trigger stops the upgrade.
    var replacement: String
}

enum SchemaConversions {
    /// The conversion of each version whose migration has a `-- @convert` line.
    static let byVersion: [Int: SchemaConversion.Type] = [7: NotificationRowsConversion.self, 8: SubjectRecordsConversion.self]

    /// The marker line that splits a migration around its conversion.
    static let marker = "\n-- @convert\n"

    /// Refuses an upgrade from `version` while users' triggers sit on a table
    /// a pending version replaces: every such trigger named (the engine's
    /// own, known by name and text, are not), with what replaces its table.
    static func refuseUserTriggers(_ db: Connection, upgradingFrom version: Int) throws {
        let replaced = byVersion.filter { $0.key > version }.sorted { $0.key < $1.key }.flatMap { $0.value.replacedTables }
        var found: [String] = [], drops: [String] = []
        for table in replaced {
            let rows = try db.query("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE ORDER BY name",
                                    [.text(table.name)])
            let names = rows.compactMap { row -> String? in
                guard let name = row[0].string, Connection.engineTriggers[name] != row[1].string else { return nil }
                return identifier(name)
            }
            drops += names.map { "DROP TRIGGER \($0);" }
            if !names.isEmpty {
                found.append("\(names.joined(separator: ", ")) on \(table.name) (\(table.replacement))")
            }
        }
        guard !found.isEmpty else { return }
        throw CatalogError("the catalog has schema version \(version) and needs upgrading to \(Schema.currentVersion), which replaces tables "
                           + "that carry triggers of yours: " + found.joined(separator: "; ")
                           + ". Nothing was changed: drop those triggers (" + drops.joined(separator: " ") + ") and open the catalog again")
    }

    /// A trigger's name as SQL takes it: bare when it is a plain word, else in double quotes.
    static func identifier(_ name: String) -> String {
        let plain = name.utf8.first.map { !(48...57).contains($0) } ?? false
            && name.utf8.allSatisfy { (97...122).contains($0) || (65...90).contains($0) || (48...57).contains($0) || $0 == 95 }
        return plain ? name : "\"" + name.replacing("\"", with: "\"\"") + "\""
    }
}
