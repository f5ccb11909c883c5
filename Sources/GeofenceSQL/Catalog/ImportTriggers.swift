/// The engine's per-row insert triggers on gf_areas that an import makes
/// redundant, dropped for its inserts and re-created from the engine's text
/// after them, inside its transaction (a rollback restores them with the
/// rest):
///
/// - `gf_areas_stamp_insert`: the catalog stamp then moves once, at the
///   end, not once per area (each an UPDATE of gf_meta);
/// - `gf_areas_default_id_free`: an import gives each new area's implied
///   conditions the ids after the highest one in use (`ImpliedConditions`).
///
/// Updates and deletes (an upsert) keep their triggers. A user's own
/// triggers are not touched. As `BulkSpatialIndex` does for SpatiaLite's
/// triggers, a stored text that differs from the engine's is thereby
/// repaired.
enum ImportTriggers {
    static let dropped: [(name: String, sql: String)] =
        CatalogStamp.triggers.filter { $0.name == "gf_areas_stamp_insert" }
        + EmbeddedSQL.triggers(inMigration: 12).filter { $0.name == "gf_areas_default_id_free" }

    static func suspend(_ db: Connection) throws {
        for t in dropped { try db.query("DROP TRIGGER IF EXISTS \"\(t.name)\"") }
    }

    static func resume(_ db: Connection) throws {
        try EmbeddedSQL.recreate(db, dropped)
        try db.query("UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'")
    }
}
