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
/// triggers over those alone), made from the text the catalog itself was
/// made with, and none of the catalog's own tables. SQLite looks a table
/// named without a schema up in temp, then main, then the attached databases
/// in the order they were attached; the engine's statements name no schema,
/// so they read gf_areas, gf_conditions, gf_settings, gf_meta and the
/// spatial index from the attached catalog and write the state into main.
/// Attached `mode=ro`, the catalog cannot be written by anything on the
/// connection.
public enum StateDatabase {
    /// What of a catalog a state database holds, in the order they are made.
    static let objects = ["gf_subject_keys", "gf_area_keys", "gf_notification_rows", "gf_notification_rows_by_subject",
                          "gf_subject_state", "gf_inside", "gf_runs", "gf_explain",
                          "gf_notifications", "gf_notifications_delete", "gf_subjects", "gf_subjects_remove"]

    /// The schema that holds the catalog on this connection, as SQL names
    /// it: main when main holds one (a gf_meta table), else the first
    /// attached database that does (where SQLite finds the catalog's tables
    /// for a state database as main), else main.
    public static func catalogSchema(_ db: Connection) throws -> String {
        let names = try db.query("PRAGMA database_list").compactMap { $0[1].string }.filter { $0 != "temp" }
        for name in names {
            let schema = name == "main" ? "main" : quoted(name)
            if try db.scalar("SELECT count(*) FROM \(schema).sqlite_master WHERE type = 'table' AND name = 'gf_meta'").int64 == 1 {
                return schema
            }
        }
        return "main"
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
        guard version == Schema.currentVersion else {
            throw CatalogError("main is a state database of schema version \(version.map(String.init) ?? "unknown"), and this geofence "
                               + "needs version \(Schema.currentVersion): export its subjects' state (gf_state_export) and import it "
                               + "into a new state database")
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
        case .older(let v), .newer(let v):
            throw CatalogError("the attached catalog \(schema) has schema version \(v), and this geofence makes state databases "
                               + "for version \(Schema.currentVersion)")
        case .absent: throw CatalogError("no catalog is attached")
        }
        let taken = try db.query("SELECT name FROM main.sqlite_master WHERE name GLOB 'gf_*'").compactMap { $0[0].string }
        if let first = taken.first {
            throw CatalogError("main has \(first) already: a state database is made in a new, empty database")
        }
        for name in objects {
            guard let sql = try db.scalar("SELECT sql FROM \(schema).sqlite_master WHERE name = ?", [.text(name)]).string else {
                throw CatalogError("the attached catalog \(schema) has no \(name): a damaged catalog")
            }
            // Made in main: a CREATE without a schema makes its object there.
            try db.execute(sql)
        }
        try db.execute("CREATE TABLE gf_state_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        try db.query("INSERT INTO main.gf_state_meta (key, value) VALUES ('schema_version', ?), ('created_by', ?)",
                     [.text(String(Schema.currentVersion)), .text("geofence " + GeofenceVersion.string)])
    }

    /// `name` as an SQL identifier: in double quotes, a quote in it doubled.
    private static func quoted(_ name: String) -> String {
        "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
