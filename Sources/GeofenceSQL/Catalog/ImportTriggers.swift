/// The engine's per-row insert triggers on gf_areas that an import makes
/// redundant, dropped for its inserts and re-created from the engine's text
/// after them, inside its transaction (a rollback restores them with the
/// rest):
///
/// - `gf_areas_stamp_insert`: the catalog stamp then moves once, at the
///   end, not once per area (each an UPDATE of gf_meta);
/// - `gf_areas_default_id_free`: an import gives each new area's implied
///   conditions the ids after the highest one in use (`ImpliedConditions`);
/// - `gf_areas_replace_keeps_implied`: an import never replaces a row, and
///   its upserts keep the column.
///
/// Updates and deletes (an upsert) keep their triggers. A user's own
/// triggers are not touched. Only the triggers the catalog holds are
/// re-created (one made at an older schema version, as the upgrade tests
/// make, has none of version 12's, nor their column); as
/// `BulkSpatialIndex` does for SpatiaLite's triggers, a stored text that
/// differs from the engine's is thereby repaired.
enum ImportTriggers {
    static let dropped: [(name: String, sql: String)] =
        CatalogStamp.triggers.filter { $0.name == "gf_areas_stamp_insert" }
        + EmbeddedSQL.triggers(inMigration: 12).filter { ["gf_areas_default_id_free", "gf_areas_replace_keeps_implied"].contains($0.name) }

    /// Drops those of `dropped` the catalog holds and returns them, for `resume`.
    static func suspend(_ db: Connection) throws -> [(name: String, sql: String)] {
        let held = try Set(db.query("SELECT name FROM sqlite_master WHERE type = 'trigger'").compactMap { $0.first?.string })
        let suspended = dropped.filter { held.contains($0.name) }
        for t in suspended { try db.query("DROP TRIGGER \"\(t.name)\"") }
        return suspended
    }

    static func resume(_ db: Connection, _ suspended: [(name: String, sql: String)]) throws {
        try EmbeddedSQL.recreate(db, suspended)
        try db.query("UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'")
    }
}
