/// Fills gf_areas' R*Tree in one statement at the end of an import, instead
/// of through SpatiaLite's per-row triggers.
///
/// Why: SpatiaLite's insert trigger calls RTreeAlign(), which formats and
/// prepares an SQL statement for every row, and a second trigger rewrites
/// geometry_columns_time for every row; together they were most of an
/// import's SQLite time. Inside the import's transaction the two insert
/// triggers are dropped, the rows inserted, the index rows for every new id
/// added with one INSERT … SELECT, and the triggers re-created from their own
/// SQL. The transaction makes this all or nothing: a failed or killed import
/// rolls the triggers back with the rows. Updates (`--upsert` of an existing
/// area) still go through SpatiaLite's update trigger, which stays.
struct BulkSpatialIndex {
    let db: Connection
    static let triggers = ["gii_gf_areas_geom", "tmi_gf_areas_geom"]
    private var saved: [String] = []
    private var firstNewId: Int64 = 0

    init(_ db: Connection) { self.db = db }

    /// Call inside the transaction, after any clearing, before the inserts.
    mutating func begin() throws {
        let rows = try db.query("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'gf_areas' AND name IN ('\(Self.triggers.joined(separator: "', '"))')")
        // A catalog whose index triggers are not SpatiaLite's usual pair is left to them.
        guard rows.count == Self.triggers.count else { return }
        saved = rows.compactMap { $0[1].string }
        firstNewId = (try db.scalar("SELECT coalesce(max(id), 0) + 1 FROM gf_areas").int64) ?? 1
        for name in Self.triggers { try db.execute("DROP TRIGGER \"\(name)\"") }
    }

    /// Indexes the rows inserted since `begin` and restores the triggers.
    func finish() throws {
        guard !saved.isEmpty else { return }
        try db.query("""
            INSERT INTO idx_gf_areas_geom (pkid, xmin, xmax, ymin, ymax)
            SELECT id, MbrMinX(geom), MbrMaxX(geom), MbrMinY(geom), MbrMaxY(geom) FROM gf_areas
            WHERE id >= ? AND geom IS NOT NULL AND id NOT IN (SELECT pkid FROM idx_gf_areas_geom WHERE pkid >= ?)
            """, [.integer(firstNewId), .integer(firstNewId)])
        for sql in saved { try db.execute(sql) }
        try db.query("""
            UPDATE geometry_columns_time SET last_insert = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
            WHERE lower(f_table_name) = 'gf_areas' AND lower(f_geometry_column) = 'geom'
            """)
    }
}
