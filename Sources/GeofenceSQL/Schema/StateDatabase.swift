import CSQLite
import GeofenceCore

/// A state database: gf_check's subjects' state and notifications kept apart
/// from the catalog, which is ATTACHed to it read-only and never written
/// (docs/state.md):
///
///     -- sqlite3 state.db, with the extension loaded
///     ATTACH 'file:fences.db?mode=ro' AS catalog;
///     SELECT gf_state_init();                     -- once: main becomes a state database
///     SELECT gf_check('u1', '2026-11-20T09:00:00Z', 35.71, 139.77, 10);
///
/// It holds a catalog's state tables (gf_subject_state, gf_inside, the
/// notification rows and their keys, gf_runs, gf_explain, and the views and
/// triggers over those alone), made from the engine's own text
/// (`StateObjects`, never the attached catalog's), and none of the
/// catalog's own tables. SQLite looks a table
/// named without a schema up in temp, then main, then the attached databases
/// in the order they were attached; the engine's statements name no schema,
/// so they read gf_areas, gf_conditions, gf_settings, gf_meta and the
/// spatial index from the attached catalog and write the state into main.
/// Attached `mode=ro`, the catalog cannot be written by anything on the
/// connection.
public enum StateDatabase {
    /// The catalog's views a state database cannot hold (a view in main reads
    /// main's tables only, and these read the catalog's too), each made in
    /// main as a view of a table that does not exist, named for what to do:
    /// without it, SQLite would find the attached catalog's own view, which
    /// reads the catalog's state, not this database's.
    static let unkept = [
        ("gf_stays", "gf_stays is not kept in a state database: read the stays in gf_subject_state's records (docs/state.md)"),
        ("gf_last_notified", "gf_last_notified is not kept in a state database: read the days in gf_subject_state's records (docs/state.md)"),
    ]

    /// The schema that holds the catalog on this connection, as SQL names
    /// it: main when main holds one (a gf_meta table), else the first
    /// attached database that does (where SQLite finds the catalog's tables
    /// for a state database as main), else main.
    public static func catalogSchema(_ db: Connection) throws -> String {
        // main first, alone: the usual case costs one query, not the list too.
        guard !(try holdsCatalog(db, "main")) else { return "main" }
        let names = try db.query("PRAGMA database_list").compactMap { $0[1].string }.filter { $0 != "temp" && $0 != "main" }
        for name in names where try holdsCatalog(db, quoted(name)) { return quoted(name) }
        return "main"
    }

    /// Whether `schema` has a gf_meta: told by preparing a statement on it,
    /// which looks the name up in SQLite's schema in memory (a scan of
    /// sqlite_master cost a SpatiaLite catalog's 165 rows a call).
    private static func holdsCatalog(_ db: Connection, _ schema: String) throws -> Bool {
        do {
            _ = try db.prepare("SELECT 1 FROM \(schema).gf_meta")
            return true
        } catch let e as SQLiteError where e.isPlainError {
            return false   // no such table
        }
    }

    /// What to say of a database with no catalog that is a state database
    /// (its catalog not attached: the command-line tool, or a connection
    /// that did not ATTACH it); nil for any other database.
    static func notACatalog(_ db: Connection) throws -> String? {
        guard try db.scalar("SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = 'gf_state_meta'").int64 == 1 else {
            return nil
        }
        return "this is a state database (made by gf_state_init), not a catalog: it holds subjects' state and notifications "
            + "for a catalog ATTACHed to it. Read it in SQL with its catalog attached (gf_state_export, gf_notifications; "
            + "docs/state.md); the command-line tool opens catalogs only"
    }

    /// Refuses a connection whose catalog is attached to a main that is not
    /// a state database of this version: the engine's writes would go to the
    /// attached catalog (or fail there), never where the caller meant.
    static func requireStateInMain(_ db: Connection) throws {
        let schema = try catalogSchema(db)
        guard schema != "main" else { return }
        let hasMeta = try db.scalar("SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = 'gf_state_meta'").int64 == 1
        guard hasMeta else {
            throw CatalogError("the catalog is in the attached database \(schema), and main is not a state database (no gf_state_meta): "
                               + "make a new, empty main one with `SELECT gf_state_init()` (docs/state.md)")
        }
        let version = try db.scalar("SELECT value FROM main.gf_state_meta WHERE key = 'schema_version'").string.flatMap { Int($0) }
        guard version == Schema.currentVersion else { throw CatalogError(notUpgradable(version)) }
        try requireIntact(db, catalog: schema)
    }

    /// Refuses a state database whose objects are not the engine's (a table
    /// missing would send the writes to the attached catalog; one of the
    /// catalog's names in main would hide the catalog's rows), and a catalog
    /// attached so that it can be written.
    private static func requireIntact(_ db: Connection, catalog schema: String) throws {
        try requireOwnObjects(db, catalog: schema)
        if try !attachedReadOnly(db, schema) {
            throw CatalogError("the catalog is attached as \(schema) so that it can be written: attach it read-only "
                               + "(`ATTACH 'file:fences.db?mode=ro' AS catalog`), so that no call can write it")
        }
    }

    /// Refuses a main whose objects are not those gf_state_init makes (each
    /// by its text), whose id floor has no row, or which holds one of the
    /// attached catalog's names (`catalog`: its schema; "main" when none is
    /// attached, then not asked): what gf_check and gf_state_upgrade both
    /// require, so no state database is upgraded that gf_check then refuses.
    static func requireOwnObjects(_ db: Connection, catalog schema: String) throws {
        let stored = Dictionary(try db.query("SELECT name, sql FROM main.sqlite_master WHERE name GLOB 'gf_*'").compactMap { row in
            row[0].string.map { ($0, row[1].string ?? "") }
        }, uniquingKeysWith: { a, _ in a })
        let damage = "main is a damaged state database"
        for object in StateObjects.all where stored[object.name] != object.sql {
            throw CatalogError("\(damage): its \(object.name) is \(stored[object.name] == nil ? "missing" : "not as gf_state_init made it") "
                               + "(export the state with gf_state_export and import it into a new state database)")
        }
        if try db.scalar("SELECT count(*) FROM main.gf_notification_floor").int64 == 0 {
            throw CatalogError("\(damage): its gf_notification_floor has no row, so the id of a notification deleted could be given again "
                               + "(export the state with gf_state_export and import it into a new state database)")
        }
        guard schema != "main" else { return }
        let own = Set(StateObjects.all.map(\.name) + unkept.map(\.0) + ["gf_state_meta"])
        let catalogNames = Set(try db.query("SELECT name FROM \(schema).sqlite_master").compactMap { $0[0].string })
        if let shadow = stored.keys.sorted().first(where: { !own.contains($0) && catalogNames.contains($0) }) {
            throw CatalogError("\(damage): it has \(shadow), which would hide the catalog's own (a state database holds only what gf_state_init made)")
        }
    }

    /// Makes main, which must hold none of a catalog's tables, a state
    /// database for the catalog attached to it (of the current version),
    /// inside the caller's transaction: each object from the text it has
    /// in that catalog, and gf_state_meta with the schema version.
    static func create(_ db: Connection) throws {
        let schema = try catalogSchema(db)
        guard schema != "main" else {
            let own = try db.scalar("SELECT count(*) FROM main.sqlite_master WHERE name = 'gf_meta'").int64 == 1
            throw CatalogError(own ? "main is a catalog itself: a state database is a new, empty database with the catalog attached to it"
                                   : "no catalog is attached: `ATTACH 'file:fences.db?mode=ro' AS catalog` first")
        }
        switch try Schema.state(of: db) {
        case .current: break
        case .older(let v):
            throw CatalogError("the attached catalog \(schema) has schema version \(v), and this geofence makes state databases "
                               + "for version \(Schema.currentVersion): upgrade the catalog in place by opening it once with the "
                               + "command-line tool (e.g. `geofence settings fences.db`), then attach it again")
        case .newer(let v):
            throw CatalogError("the attached catalog \(schema) has schema version \(v), and this geofence makes state databases "
                               + "for version \(Schema.currentVersion)")
        case .absent: throw CatalogError("no catalog is attached")
        }
        let taken = try db.query("SELECT name FROM main.sqlite_master WHERE name GLOB 'gf_*'").compactMap { $0[0].string }
        if let first = taken.first {
            throw CatalogError("main has \(first) already: a state database is made in a new, empty database")
        }
        // The engine's own text (`StateObjects`), one statement each: never the attached catalog's.
        for object in StateObjects.all { try db.execute(object.sql) }
        try db.execute("INSERT INTO main.gf_notification_floor (singleton, id) VALUES (1, 0)")
        for (view, instead) in unkept { try db.execute("CREATE VIEW \(view) AS SELECT * FROM \(quoted(instead))") }
        try db.execute("CREATE TABLE gf_state_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        try db.query("INSERT INTO main.gf_state_meta (key, value) VALUES ('schema_version', ?), ('created_by', ?)",
                     [.text(String(Schema.currentVersion)), .text("geofence " + GeofenceVersion.string)])
        // Where gf_check writes: the cache the catalog suggests matters most here.
        try SuggestedCache.write(db)
    }

    /// Whether the database attached as `schema` (as `catalogSchema` names
    /// it) was attached read-only.
    private static func attachedReadOnly(_ db: Connection, _ schema: String) throws -> Bool {
        for row in try db.query("PRAGMA database_list") {
            guard let name = row[1].string, quoted(name) == schema else { continue }
            return sqlite.pointee.db_readonly!(db.handle, name) == 1
        }
        return false
    }

    /// `name` as an SQL identifier: in double quotes, a quote in it doubled.
    private static func quoted(_ name: String) -> String {
        "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
