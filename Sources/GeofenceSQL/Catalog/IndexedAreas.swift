import GeofenceCore

/// Every area of a catalog as its R*Tree holds it: the area_id, the index
/// box and the row id, in grid order (area_id by its bytes, SQLite's BINARY
/// order: `utf8Precedes`). What a batch reads at its start to build its
/// grid before it prepares any area (`OnDemandAreas`, `OnDemandCatalog`,
/// `SQLCatalog.loadIndexIntoMemory`).
///
/// How: two scans in storage order, joined here by row id. The boxes come
/// from one scan of the R*Tree; the ids and row ids from gf_areas' area_id
/// index, which holds both (a covering index: no area row and no geometry
/// is read), and which lists them in area_id order already, so the sort
/// into grid order only confirms it. Joined in SQL, gf_areas would be read
/// in the R*Tree's order, a random page per area.
///
/// Rule: an index box is not the shape's own box. A polygon's is its own
/// box in 32-bit floats rounded outward, a hair larger; a circle's is the
/// box of its enclosing 32-gon, narrower than the circle's own box
/// (`Geodesy.boundingBox`: 1 % slack, the longitude scale of its poleward
/// edge) yet holding the circle. A caller that answers by boxes takes the
/// fixes both hold (`BatchLocate.heldByShapeBox`, once the area is prepared).
struct IndexedAreas {
    /// In grid order: the area's id and index box, and its row in gf_areas.
    private(set) var items: [(String, BoundingBox)] = []
    private(set) var rows: [Int64] = []
    /// Rows the R*Tree holds no box for (a geometry it did not index: NULL,
    /// empty, or written past SpatiaLite's triggers), in row order.
    private(set) var unindexed: [(row: Int64, id: String)] = []

    init(_ db: Connection, _ tables: CatalogTables = .unqualified) throws {
        let boxes = try BoxesByRow(db, tables)
        let ids = try db.prepare("SELECT id, area_id FROM \(tables.areas)")
        var found: [(String, BoundingBox)] = [], rowOf: [Int64] = []
        found.reserveCapacity(boxes.count)
        rowOf.reserveCapacity(boxes.count)
        while try ids.step() {
            guard let row = ids.value(0).int64 else { continue }
            let id = try CatalogError.areaId(ids, 1, row: row)
            if let box = boxes[row] {
                found.append((id, box))
                rowOf.append(row)
            } else {
                unindexed.append((row, id))
            }
        }
        unindexed.sort { $0.row < $1.row }
        // Swift's sort finds the one ascending run at once.
        let order = found.indices.sorted { found[$0].0.utf8Precedes(found[$1].0) }
        items = order.map { found[$0] }
        rows = order.map { rowOf[$0] }
    }
}
