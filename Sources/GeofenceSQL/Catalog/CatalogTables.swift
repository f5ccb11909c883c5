/// The catalog's tables as the engine's reads name them in SQL, with the
/// schema that holds them:
///
///     let t = try CatalogTables(db)          // main, or the attached catalog of a state database
///     db.prepare("SELECT … FROM \(t.conditionRows) WHERE area_id = ?")   // main.gf_condition_rows
///
/// Why: SQLite looks a table named without its database up in TEMP first,
/// so a TEMP table of the caller's connection named gf_conditions (a scratch
/// copy, say) would be read as the catalog's conditions, and every fix
/// judged against them. `unqualified` keeps SQLite's own lookup, for a
/// connection of the engine's own (the command-line tool's), whose TEMP
/// schema holds nothing of a user's.
struct CatalogTables: Sendable {
    /// The schema's name as SQL writes it ("main", or a quoted attached name); nil: none written.
    let schema: String?

    init(_ db: Connection) throws { schema = try StateDatabase.catalogSchema(db) }
    private init(schema: String?) { self.schema = schema }
    static let unqualified = CatalogTables(schema: nil)

    /// `table` named in the catalog's schema.
    func named(_ table: String) -> String { schema.map { "\($0).\(table)" } ?? table }
    var areas: String { named("gf_areas") }
    /// The stored conditions: an area's implied pair is in its own row
    /// (`ImpliedConditions`), which the engine reads with the area.
    var conditionRows: String { named("gf_condition_rows") }
    var settings: String { named("gf_settings") }
    /// SpatiaLite's R*Tree of gf_areas.geom.
    var index: String { named("idx_gf_areas_geom") }
}
