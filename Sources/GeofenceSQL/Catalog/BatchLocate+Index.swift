import GeofenceCore

/// `locate --fixes` with few fixes against a large catalog: each fix's
/// candidates through the R*Tree, instead of every area's box read into a
/// grid first (a cost that grows with the catalog, not with the batch).
///
/// Rule: the same pairs as the grid's path, in the same order. The R*Tree's
/// boxes are 32-bit floats rounded outward, so its answer is filtered by the
/// shape's own box (`heldByShapeBox`, as the grid's path narrows its own),
/// both ends included; at ±180° both spellings of the meridian are asked, each area
/// once; a fix's pairs come in area_id order (by bytes, the grid's). Areas
/// are read and prepared once per batch, when a fix first reaches them.
extension BatchLocate {
    /// A batch this small locates through the index: fewer valid fixes than
    /// the catalog's areas / 30, as a judgement chooses (`CandidateStrategy`).
    static func fewFixesLimit(_ db: Connection) throws -> Int {
        // max(id) reads one b-tree path, where count(*) reads every row.
        Int(try db.scalar("SELECT coalesce(max(id), 0) FROM gf_areas").int64 ?? 0) / 30
    }

    static func locateThroughIndex(_ db: Connection, _ points: [Point], _ confidence: Double?, idsVersion: Int) throws -> Pairs {
        let defaultConfidence = try Settings(db).defaultConfidence()
        let window = try db.prepare("""
            SELECT pkid FROM idx_gf_areas_geom WHERE xmin <= ?1 AND xmax >= ?1 AND ymin <= ?2 AND ymax >= ?2
            """)
        let read = try db.prepare("SELECT \(AreaStore.judgedColumns) FROM gf_areas WHERE id = ?1")
        var areas: [Int64: JudgedArea?] = [:]
        func area(_ row: Int64) throws -> JudgedArea? {
            if let known = areas[row] { return known }
            try read.bind([.integer(row)])
            defer { read.reset() }
            var made: JudgedArea?
            if try read.step() {
                _ = try CatalogError.areaId(read, AreaStore.Column.area_id.rawValue, row: row)
                made = JudgedArea(definition: try AreaStore.area(read.row), defaultConfidence: defaultConfidence, conditions: [])
            }
            areas[row] = made
            return made
        }
        var pairs = Pairs(ids: [], idsVersion: idsVersion, all: [])
        var place: [String: Int32] = [:]
        for point in points {
            var rows = Set<Int64>()
            for lon in abs(point.p.lon) == 180 ? [-180.0, 180.0] : [point.p.lon] {
                try window.bind([.real(lon), .real(point.p.lat)])
                defer { window.reset() }
                while try window.step() { if let row = window.value(0).int64 { rows.insert(row) } }
            }
            var found: [(id: String, verdict: Verdict)] = []
            for row in rows {
                guard let a = try area(row), heldByShapeBox(a, point.p) else { continue }
                let v = verdict(a, point, confidence)
                if v != .outside { found.append((a.definition.areaId, v)) }
            }
            found.sort { $0.id.utf8Precedes($1.id) }
            for f in found {
                let i = place[f.id] ?? Int32(pairs.ids.count)
                if i == pairs.ids.count { place[f.id] = i; pairs.ids.append(f.id) }
                pairs.all.append(Pair(row: point.row, area: i, verdict: f.verdict))
            }
        }
        return pairs
    }
}
