/// Fills gf_areas' R*Tree in one statement at the end of an import, instead
/// of through SpatiaLite's per-row triggers.
///
/// Why: SpatiaLite's insert trigger calls RTreeAlign(), which formats and
/// prepares an SQL statement for every row, and a second trigger rewrites
/// geometry_columns_time for every row; together they would cost far more
/// than the rows' own inserts. Inside the import's transaction the two insert
/// triggers are dropped, the rows inserted, the index rows for every new id
/// added with one INSERT … SELECT, and the triggers re-created. The
/// transaction makes this all or nothing: a failed or killed import rolls the
/// triggers back with the rows. Updates (`--upsert` of an existing area)
/// still go through SpatiaLite's update trigger, which stays.
///
/// The triggers are re-created from the engine's own text (SpatiaLite 5's
/// definitions, below), never from the text stored in sqlite_master: that
/// text comes from the database file, and a file whose trigger text carries
/// further statements (ATTACH another file, DROP a table in it) would have
/// them run by a multi-statement exec. A stored text that differs from
/// SpatiaLite's is thereby repaired, and listed in `repaired`. So is a
/// missing one: a catalog whose insert trigger was dropped has areas missing
/// from the index (invisible to every spatial query), so then every area not
/// in the index is indexed, not only the new ones. A catalog without the
/// index itself is refused.
///
/// An import that inserts at least as many areas as the index held writes
/// the whole index anew, packed (`PackedRTree`: the same boxes, fewer pages,
/// a second instead of an insert a row); a smaller one inserts its rows
/// into the tree as it is.
struct BulkSpatialIndex {
    let db: Connection

    /// SpatiaLite 5's R*Tree insert triggers for gf_areas.geom, as
    /// CreateSpatialIndex('gf_areas', 'geom') writes them: the index row of a
    /// new area, and the table's last-insert time.
    static let definitions: [(name: String, sql: String)] = [
        ("gii_gf_areas_geom", """
            CREATE TRIGGER "gii_gf_areas_geom" AFTER INSERT ON "gf_areas"
            FOR EACH ROW BEGIN
            DELETE FROM "idx_gf_areas_geom" WHERE pkid=NEW.ROWID;
            SELECT RTreeAlign('idx_gf_areas_geom', NEW.ROWID, NEW."geom");
            END
            """),
        ("tmi_gf_areas_geom", """
            CREATE TRIGGER "tmi_gf_areas_geom" AFTER INSERT ON "gf_areas"
            FOR EACH ROW BEGIN
            UPDATE geometry_columns_time SET last_insert = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
            WHERE Lower(f_table_name) = Lower('gf_areas') AND Lower(f_geometry_column) = Lower('geom');
            END
            """),
    ]

    private var active = false
    private var firstNewId: Int64 = 0
    /// Rows the index held at `begin`; nil when it is not a plain 2-D rtree.
    private var indexed: Int64?
    /// Triggers whose stored text was not SpatiaLite's and that `finish` replaced.
    private(set) var repaired: [String] = []

    init(_ db: Connection) { self.db = db }

    /// Call inside the transaction, after any clearing, before the inserts.
    mutating func begin() throws {
        let names = Self.definitions.map(\.name)
        let index = try db.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'idx_gf_areas_geom'")
        guard index.int64 == 1 else {
            throw CatalogError("the catalog has no spatial index on gf_areas.geom (table idx_gf_areas_geom): "
                               + "re-create it with SELECT CreateSpatialIndex('gf_areas', 'geom') in a SpatiaLite shell")
        }
        let rows = try db.query("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN (?, ?)",
                                names.map { .text($0) })
        repaired = Self.definitions.filter { d in !rows.contains { $0[0].string == d.name && $0[1].string == d.sql } }.map(\.name)
        let indexComplete = rows.contains { $0[0].string == names[0] }
        firstNewId = indexComplete ? ((try db.scalar("SELECT coalesce(max(id), 0) + 1 FROM gf_areas").int64) ?? 1) : 1
        for row in rows { if let name = row[0].string { try db.execute("DROP TRIGGER \"\(name)\"") } }
        indexed = try RTreeNodes.isPlain(db, .unqualified) ? db.scalar("SELECT count(*) FROM idx_gf_areas_geom_rowid").int64 : nil
        active = true
    }

    /// Indexes the rows inserted since `begin` (`inserted` of them) and
    /// re-creates the triggers.
    func finish(inserted: Int) throws {
        guard active else { return }
        if let indexed, Int64(inserted) >= indexed, let size = try PackedRTree.nodeSize(db), let entries = try everyBox() {
            try PackedRTree.write(consume entries, into: db, nodeSize: size)
        } else {
            try insertNewRows()
        }
        // One statement each, prepared and stepped: nothing after it could run.
        for d in Self.definitions { try db.query(d.sql) }
        try db.query("""
            UPDATE geometry_columns_time SET last_insert = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
            WHERE lower(f_table_name) = 'gf_areas' AND lower(f_geometry_column) = 'geom'
            """)
    }

    /// Every area's box as the index would store it, or nil when one has a
    /// box the module would refuse or read as zeros (a geometry SpatiaLite
    /// cannot read): then the rows go through the module, which says so.
    private func everyBox() throws -> [PackedRTree.Entry]? {
        let rows = try db.prepare("""
            SELECT id, MbrMinX(geom), MbrMaxX(geom), MbrMinY(geom), MbrMaxY(geom) FROM gf_areas WHERE geom IS NOT NULL
            """)
        var entries: [PackedRTree.Entry] = []
        while try rows.step() {
            guard case .integer(let id) = rows.value(0), case .real(let minX) = rows.value(1), case .real(let maxX) = rows.value(2),
                  case .real(let minY) = rows.value(3), case .real(let maxY) = rows.value(4),
                  let entry = PackedRTree.Entry(id: id, minX: minX, maxX: maxX, minY: minY, maxY: maxY) else {
                rows.reset()
                return nil
            }
            entries.append(entry)
        }
        return entries
    }

    private func insertNewRows() throws {
        try db.query("""
            INSERT INTO idx_gf_areas_geom (pkid, xmin, xmax, ymin, ymax)
            SELECT id, MbrMinX(geom), MbrMaxX(geom), MbrMinY(geom), MbrMaxY(geom) FROM gf_areas
            WHERE id >= ? AND geom IS NOT NULL AND id NOT IN (SELECT pkid FROM idx_gf_areas_geom WHERE pkid >= ?)
            """, [.integer(firstNewId), .integer(firstNewId)])
    }
}
