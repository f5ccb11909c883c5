/// The triggers that keep `gf_meta.catalog_stamp` moving (sql/005), which a
/// connection caching the catalog (gf_check's session) relies on to notice
/// every change of areas, conditions and settings, rolled back or not.
///
///     SELECT name FROM sqlite_master WHERE name LIKE 'gf\_%\_stamp\_%' ESCAPE '\';  -- the nine of them
///
/// A catalog file that lost one (or whose text was altered), or the stamp's
/// row itself (the triggers' UPDATE then changes nothing), would let a cache
/// that trusts the stamp outlive a change. So the command-line tool
/// re-creates them from the engine's own text whenever it opens a writable
/// catalog (`Schema.open`), and gf_check refuses to cache a catalog that
/// lacks them.
enum CatalogStamp {
    /// (name, CREATE TRIGGER text as sqlite_master stores it), from sql/005.
    static let triggers = EmbeddedSQL.triggers(inMigration: 5)
    /// What `damaged` names for a missing stamp row.
    static let row = "gf_meta row 'catalog_stamp'"

    /// The stamp triggers that are missing or not as the engine wrote them.
    static func damaged(_ db: Connection) throws -> [String] {
        // The catalog's own triggers: main's, or an attached catalog's (`StateDatabase`).
        let schema = try StateDatabase.catalogSchema(db)
        let stored = try db.query("SELECT name, sql FROM \(schema).sqlite_master WHERE type = 'trigger' AND name GLOB 'gf_*_stamp_*'")
        let missing = triggers.filter { t in !stored.contains { $0[0].string == t.name && $0[1].string == t.sql } }.map(\.name)
        let hasRow = try db.scalar("SELECT count(*) FROM \(schema).gf_meta WHERE key = 'catalog_stamp'").int64 ?? 0
        return hasRow == 0 ? missing + [row] : missing
    }

    /// Re-creates `names` from the engine's text, inside the caller's transaction.
    static func repair(_ db: Connection, _ names: [String]) throws {
        try EmbeddedSQL.recreate(db, triggers.filter { names.contains($0.name) })
        if names.contains(row) { try db.execute("INSERT OR IGNORE INTO gf_meta (key, value) VALUES ('catalog_stamp', random())") }
    }
}
