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
/// triggers are not touched; one of these names is the engine's, so its
/// text is the engine's again afterwards. Each is re-created whether or not
/// the catalog held it (one missing is thereby repaired, as a stored text
/// that differs from the engine's is, and as `BulkSpatialIndex` does for
/// SpatiaLite's triggers), except version 12's in a catalog without its
/// column (one made at an older version, as the upgrade tests make).
enum ImportTriggers {
    static let implied = EmbeddedSQL.triggers(inMigration: 12).filter { ["gf_areas_default_id_free", "gf_areas_replace_keeps_implied"].contains($0.name) }
    static let dropped: [(name: String, sql: String)] = CatalogStamp.triggers.filter { $0.name == "gf_areas_stamp_insert" } + implied

    /// Drops them all and returns those `resume` re-creates.
    static func suspend(_ db: Connection) throws -> [(name: String, sql: String)] {
        let hasColumn = try !db.query("SELECT 1 FROM pragma_table_info('gf_areas') WHERE name = ?", [.text(ImpliedConditions.column)]).isEmpty
        for t in dropped { try db.query("DROP TRIGGER IF EXISTS \"\(t.name)\"") }
        return hasColumn ? dropped : dropped.filter { t in !implied.contains { $0.name == t.name } }
    }

    static func resume(_ db: Connection, _ suspended: [(name: String, sql: String)]) throws {
        try EmbeddedSQL.recreate(db, suspended)
        try db.query("UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'")
    }
}
