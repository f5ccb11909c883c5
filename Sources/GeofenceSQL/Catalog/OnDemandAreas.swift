import GeofenceCore

/// The catalog of `locate --fixes`, prepared as the batch reaches it: every
/// area's box and id are read at the start and the grid is built from them;
/// an area's row is read, decoded and prepared only once a fix of the batch
/// falls in its box, and kept for the rest of the batch.
///
/// Why: a national catalog is mostly far from any fix of a given batch, and
/// reading and preparing all of it first would spend most of the command's
/// time and memory on areas no fix reaches. Memory grows with the catalog
/// by an id, a box and a row id per area (plus the grid's entries), and
/// with the areas the batch touches by their prepared shapes.
///
/// The boxes are the shapes' own (a polygon's vertex extremes, read in place
/// from its BLOB; a circle's from its centre and radius), not the R*Tree's,
/// so a fix meets exactly the candidates it met when every area was prepared
/// first, and reports the same pairs. A BLOB the in-place reader does not
/// take (cut at ±180°, another byte order, …) is decoded and prepared at the
/// start, as is any area whose geometry cannot be read, which fails the
/// batch before any fix.
final class OnDemandAreas {
    let grid: CandidateGrid
    /// By grid index (area_id order): the row in gf_areas, and the area once prepared.
    private let rows: [Int64]
    private(set) var prepared: [JudgedArea?]
    /// The same areas unretained (`prepared` keeps them alive): the locating
    /// threads visit them without reference counting, whose atomic writes to
    /// areas both cores read would make the cores contend for them.
    private(set) var handles: [Unmanaged<JudgedArea>?]
    private let defaultConfidence: Double
    private let read: Statement

    /// The columns `AreaStore.area` reads, properties left out (a location
    /// does not read them).
    private static let columns = AreaStore.Column.list(reading: [.properties: "NULL"])

    private enum ScanColumn: Int, NamedColumns { case id, area_id, kind, center_lat, center_lon, radius_m, geom }

    init(_ db: Connection) throws {
        defaultConfidence = Settings(db).defaultConfidence
        read = try db.prepare("SELECT \(Self.columns) FROM gf_areas WHERE id = ?1")
        var items: [(String, BoundingBox)] = []
        var rowOf: [Int64] = []
        var early: [(Int64, AreaDefinition)] = []
        let scan = try db.prepare("SELECT \(ScanColumn.list) FROM gf_areas")
        while try scan.step() {
            guard let row = scan.value(ScanColumn.id).int64 else { continue }
            let id = scan.value(ScanColumn.area_id).string ?? ""
            let box: BoundingBox?
            if scan.value(ScanColumn.kind).string == "circle" {
                // As `AreaStore.area` makes it.
                box = Circle(center: LonLat(lon: scan.value(ScanColumn.center_lon).double ?? 0, lat: scan.value(ScanColumn.center_lat).double ?? 0),
                             radiusM: scan.value(ScanColumn.radius_m).double ?? 0).boundingBoxOfShape
            } else {
                box = scan.withBlob(ScanColumn.geom.rawValue) { SpatiaLiteBlob.FlatView($0, maxVertices: Int.max)?.boundingBox }
            }
            if let box {
                items.append((id, box))
                rowOf.append(row)
            } else {
                let definition = try Self.definition(read, row: row)
                items.append((id, definition.shape.boundingBox))
                rowOf.append(row)
                early.append((row, definition))
            }
        }
        // The grid sorts the areas by area_id; the row ids follow the same order.
        let order = items.indices.sorted { items[$0].0.utf8Precedes(items[$1].0) }
        grid = CandidateGrid(order.map { items[$0] })
        rows = order.map { rowOf[$0] }
        prepared = [JudgedArea?](repeating: nil, count: rows.count)
        handles = [Unmanaged<JudgedArea>?](repeating: nil, count: rows.count)
        try CandidateGrid.requireDistinctIds(grid.ambiguousIds)
        if !early.isEmpty {
            let at = Dictionary(rows.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            for (row, definition) in early {
                if let i = at[row] { keep(JudgedArea(definition: definition, defaultConfidence: defaultConfidence, conditions: []), at: i) }
            }
        }
    }

    /// The area at `row` as `AreaStore.area` reads it (its errors included).
    private static func definition(_ read: Statement, row: Int64) throws -> AreaDefinition {
        try read.bind([.integer(row)])
        defer { read.reset() }
        guard try read.step() else { throw CatalogError("area row \(row) vanished while the batch ran") }
        return try AreaStore.area(read.row)
    }

    /// Prepares, on every core, each area not yet prepared whose box holds
    /// one of `points` (at ±180° both spellings of the meridian, as the
    /// lookup asks). After it, every candidate of these points is prepared.
    func prepare(touchedBy points: [LonLat]) throws {
        // The candidates not yet prepared, found on every core: a walk of
        // the grid per fix, the bulk of preparing a batch that reaches
        // hundreds of thousands of areas.
        let width = min(Parallel.width, max(1, points.count / 5000))
        var found = [[Int]](repeating: [], count: width)
        let grid = self.grid
        handles.withUnsafeBufferPointer { areas in
            points.withUnsafeBufferPointer { points in
                found.withUnsafeMutableBufferPointer { found in
                    let (areas, points, out) = (UnsafeBufferPointerBox(areas), UnsafeBufferPointerBox(points), UnsafeMutableBufferPointerBox(found))
                    Parallel.run(width) { w in
                        var mine: [Int] = []
                        var seen = Set<Int>()
                        func want(_ i: Int) { if seen.insert(i).inserted { mine.append(i) } }
                        let n = points.buffer.count
                        for k in (n * w / width)..<(n * (w + 1) / width) {
                            let p = points.buffer[k]
                            if abs(p.lon) == 180 {
                                grid.forEachCandidate(at: LonLat(lon: -180, lat: p.lat), in: areas.buffer, present: { _, _ in }, missing: want)
                                grid.forEachCandidate(at: LonLat(lon: 180, lat: p.lat), in: areas.buffer, present: { _, _ in }, missing: want)
                            } else {
                                grid.forEachCandidate(at: p, in: areas.buffer, present: { _, _ in }, missing: want)
                            }
                        }
                        out.buffer[w] = mine
                    }
                }
            }
        }
        var wanted: [Int] = []
        var asked = Set<Int>()
        for part in found { for i in part where asked.insert(i).inserted { wanted.append(i) } }
        guard !wanted.isEmpty else { return }
        // Rows in their table's order, so the reads walk the file forward; each
        // row's values are copied out here (SQLite, one thread) and decoded
        // and prepared on every core.
        wanted.sort { rows[$0] < rows[$1] }
        var values: [[SQLiteValue]] = []
        values.reserveCapacity(wanted.count)
        for i in wanted {
            try read.bind([.integer(rows[i])])
            defer { read.reset() }
            guard try read.step() else { throw CatalogError("area row \(rows[i]) vanished while the batch ran") }
            values.append(read.row)
        }
        var made = [Result<JudgedArea, Error>?](repeating: nil, count: wanted.count)
        let preparers = min(Parallel.width, max(1, wanted.count / 200))
        let confidence = defaultConfidence
        made.withUnsafeMutableBufferPointer { buffer in
            let out = UnsafeMutableBufferPointerBox(buffer)
            Parallel.run(preparers) { w in
                for k in stride(from: w, to: values.count, by: preparers) {
                    out.buffer[k] = Result {
                        JudgedArea(definition: try AreaStore.area(values[k]), defaultConfidence: confidence, conditions: [])
                    }
                }
            }
        }
        for (k, i) in wanted.enumerated() {
            guard let result = made[k] else { continue }
            keep(try result.get(), at: i)
        }
    }

    private func keep(_ area: JudgedArea, at i: Int) {
        prepared[i] = area
        handles[i] = Unmanaged.passUnretained(area)
    }
}

extension Circle {
    /// The box `Shape.circle(self).boundingBox` gives.
    var boundingBoxOfShape: BoundingBox { Shape.circle(self).boundingBox }
}
