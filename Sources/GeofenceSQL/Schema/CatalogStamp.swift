/// The triggers that keep `gf_meta.catalog_stamp` moving (sql/005), which a
/// connection caching the catalog (gf_check's session) relies on to notice
/// every change of areas, conditions and settings, rolled back or not; and
/// the one that raises the notification id floor at every delete (sql/011),
/// which keeps an id from being given twice (`NotificationIds`).
///
///     SELECT name FROM sqlite_master WHERE name LIKE 'gf\_%\_stamp\_%' ESCAPE '\';  -- the nine of them
///
/// A catalog file that lost one (or whose text was altered), or the stamp's
/// row itself (the triggers' UPDATE then changes nothing), would let a cache
/// that trusts the stamp outlive a change, or a cursor skip a notification.
/// So the command-line tool re-creates them from the engine's own text
/// whenever it opens a writable catalog (`Schema.open`), and gf_check refuses
/// a catalog that lacks them.
enum CatalogStamp {
    /// (name, CREATE TRIGGER text as sqlite_master stores it) of the stamp's
    /// triggers (sql/005, those on gf_conditions moved to the stored rows by
    /// sql/012) and of the id floor's (sql/011), and both.
    static let stampTriggers = EmbeddedSQL.triggers(inMigration: 5).filter { !$0.name.hasPrefix("gf_conditions_") }
        + EmbeddedSQL.triggers(inMigration: 12).filter { $0.name.contains("_stamp_") }
    static let floorTriggers = EmbeddedSQL.triggers(inMigration: 11)
    static let triggers = stampTriggers + floorTriggers
    /// What `damaged` names for the floor's table or row missing.
    static let floorTable = "table gf_notification_floor"
    static let floorRow = "row of gf_notification_floor"
    /// What `damaged` names for a missing stamp row.
    static let row = "gf_meta row 'catalog_stamp'"

    /// The stamp triggers that are missing or not as the engine wrote them.
    static func damaged(_ db: Connection) throws -> [String] {
        // The catalog's own triggers: main's, or an attached catalog's (`StateDatabase`).
        let schema = try StateDatabase.catalogSchema(db)
        // A state database's own floor triggers are checked with its other objects (`StateDatabase`).
        let expected = schema == "main" ? triggers : stampTriggers
        let stored = try db.query("SELECT name, sql FROM \(schema).sqlite_master WHERE type = 'trigger'")
        let missing = expected.filter { t in !stored.contains { $0[0].string == t.name && $0[1].string == t.sql } }.map(\.name)
        let hasRow = try db.scalar("SELECT count(*) FROM \(schema).gf_meta WHERE key = 'catalog_stamp'").int64 ?? 0
        return missing + (hasRow == 0 ? [row] : []) + (schema == "main" ? try floorDamage(db) : [])
    }

    /// The floor's table or its one row, if missing (a catalog's; a state database's are `StateDatabase`'s to check).
    static func floorDamage(_ db: Connection) throws -> [String] {
        guard try db.scalar("SELECT count(*) FROM main.sqlite_master WHERE name = 'gf_notification_floor'").int64 == 1 else { return [floorTable] }
        return try db.scalar("SELECT count(*) FROM main.gf_notification_floor").int64 == 0 ? [floorRow] : []
    }

    /// What gf_check says of a catalog lacking one (nil: none lacking).
    /// Without its stamp triggers a catalog change rolled back on this
    /// connection would go unseen, and the cache would judge by it; without
    /// the floor's, a deleted notification's id could be given again.
    static func refusal(_ db: Connection) throws -> String? {
        guard let first = try damaged(db).first else { return nil }
        let what = [row, floorTable, floorRow].contains(first) ? "the \(first) is missing" : "the catalog's trigger \(first) is missing or altered"
        let floor = [floorTable, floorRow] + floorTriggers.map(\.name)
        let risk = floor.contains(first) ? "the id of a notification deleted could be given again (a cursor would skip one)"
            : "a change of areas, conditions or settings could go unnoticed"
        return "\(what), so \(risk): open the catalog once with the command-line tool (e.g. `geofence settings DB`), which re-creates it"
    }

    /// Re-creates `names` from the engine's text, inside the caller's transaction.
    static func repair(_ db: Connection, _ names: [String]) throws {
        if names.contains(floorTable) { try db.execute(StateObjects.sql(of: "gf_notification_floor")) }
        if names.contains(floorTable) || names.contains(floorRow) {
            // The ids deleted above the greatest one are not known any more: the greatest stands for them.
            try db.execute("INSERT INTO gf_notification_floor (singleton, id) SELECT 1, coalesce(max(id), 0) FROM gf_notification_rows")
        }
        try EmbeddedSQL.recreate(db, triggers.filter { names.contains($0.name) })
        if names.contains(row) { try db.execute("INSERT OR IGNORE INTO gf_meta (key, value) VALUES ('catalog_stamp', random())") }
    }
}
