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
/// nothing (`refuseUserObjects`); so are a trigger elsewhere or a view whose
/// text names such a table, and an index on it.
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
    static let byVersion: [Int: SchemaConversion.Type] = [7: NotificationRowsConversion.self, 8: SubjectRecordsConversion.self,
                                                                 11: NotificationIdFloorConversion.self, 12: ImpliedConditionsConversion.self]

    /// The marker line that splits a migration around its conversion.
    static let marker = "\n-- @convert\n"

    /// Refuses an upgrade from `version` while objects of the user's depend
    /// on a table a pending version replaces: a trigger on it, a trigger on
    /// another table or a view whose text names it, an index on it. Each is
    /// named with what replaces its table (the engine's own objects, known
    /// by name and text, are not), and nothing is changed.
    static func refuseUserObjects(_ db: Connection, upgradingFrom version: Int) throws {
        let replaced = byVersion.filter { $0.key > version }.sorted { $0.key < $1.key }.flatMap { $0.value.replacedTables }
        guard !replaced.isEmpty else { return }
        var found: [String] = [], drops: [String] = []
        let objects = try db.query("""
            SELECT type, name, tbl_name, sql FROM sqlite_master
            WHERE type IN ('trigger', 'view', 'index') AND sql IS NOT NULL ORDER BY CASE type WHEN 'trigger' THEN 0 WHEN 'view' THEN 1 ELSE 2 END, name
            """)
        for row in objects {
            guard let type = row[0].string, let name = row[1].string, let on = row[2].string, let sql = row[3].string,
                  engineObjects[name] != sql else { continue }
            // A view, or an object on a table that stays, keeps the engine's name
            // after SQLite rewrote its text (a table renamed by an earlier
            // version): there the name decides.
            let elsewhere = type == "view" || replaced.allSatisfy { $0.name.lowercased() != on.lowercased() }
            if elsewhere && engineObjects[name] != nil { continue }
            let kind = type == "trigger" ? "trigger" : type == "view" ? "view" : "index"
            let id = identifier(name)
            if let table = replaced.first(where: { $0.name.lowercased() == on.lowercased() }), type != "view" {
                found.append("\(kind) \(id) on \(table.name) (\(table.replacement))")
            } else if type != "index", let table = replaced.first(where: { names(sql, $0.name) }) {
                found.append("\(kind) \(id)" + (type == "trigger" ? " on \(on)" : "") + ", which names \(table.name) (\(table.replacement))")
            } else {
                continue
            }
            drops.append("DROP \(kind.uppercased()) \(id);")
        }
        guard !found.isEmpty else { return }
        throw CatalogError("the catalog has schema version \(version) and needs upgrading to \(Schema.currentVersion), which replaces tables "
                           + "that objects of yours depend on: " + found.joined(separator: "; ")
                           + ". Nothing was changed: drop them (" + drops.joined(separator: " ") + ") and open the catalog again")
    }

    /// Name → CREATE text of every trigger, view and index the engine's schema makes.
    static let engineObjects: [String: String] = Connection.engineTriggers.merging(
        EmbeddedSQL.migrations.flatMap { EmbeddedSQL.definitions(inMigration: $0.0) }.map { ($0.name, $0.sql) },
        uniquingKeysWith: { _, last in last })

    /// Whether SQL text names `table` as a whole word (any case): not as part of a longer name.
    static func names(_ sql: String, _ table: String) -> Bool {
        let text = Array(sql.lowercased().utf8), word = Array(table.lowercased().utf8)
        func isNamePart(_ b: UInt8) -> Bool { (97...122).contains(b) || (48...57).contains(b) || b == 95 || b >= 128 }
        guard word.count <= text.count else { return false }
        for start in 0...(text.count - word.count) where text[start..<(start + word.count)].elementsEqual(word) {
            let before = start == 0 || !isNamePart(text[start - 1])
            let after = start + word.count == text.count || !isNamePart(text[start + word.count])
            if before && after { return true }
        }
        return false
    }

    /// An object's name as SQL takes it: bare when it is a plain word, else in double quotes.
    static func identifier(_ name: String) -> String {
        let plain = name.utf8.first.map { !(48...57).contains($0) } ?? false
            && name.utf8.allSatisfy { (97...122).contains($0) || (65...90).contains($0) || (48...57).contains($0) || $0 == 95 }
        return plain ? name : "\"" + name.replacing("\"", with: "\"\"") + "\""
    }
}
