/// The engine's per-row insert triggers that an import makes redundant,
/// dropped for its inserts and re-created from the engine's text after
/// them, inside its transaction (a rollback restores them with the rest):
///
/// - `gf_areas_stamp_insert`, `gf_conditions_stamp_insert`: the catalog
///   stamp then moves once, at the end, not once per area and condition
///   (each an UPDATE of gf_meta);
/// - `gf_conditions_need_area`: an import adds default conditions only to
///   the areas it has just inserted.
///
/// Updates and deletes (an upsert) keep their triggers. A user's own
/// triggers are not touched. As `BulkSpatialIndex` does for SpatiaLite's
/// triggers, a stored text that differs from the engine's is thereby
/// repaired.
enum ImportTriggers {
    static let dropped: [(name: String, sql: String)] =
        CatalogStamp.triggers.filter { ["gf_areas_stamp_insert", "gf_conditions_stamp_insert"].contains($0.name) }
        + EmbeddedSQL.triggers(inMigration: 1).filter { $0.name == "gf_conditions_need_area" }

    static func suspend(_ db: Connection) throws {
        for t in dropped { try db.query("DROP TRIGGER IF EXISTS \"\(t.name)\"") }
    }

    static func resume(_ db: Connection) throws {
        try EmbeddedSQL.recreate(db, dropped)
        try db.query("UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'")
    }
}
