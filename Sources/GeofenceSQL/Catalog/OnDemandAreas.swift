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
/// The boxes are the R*Tree's (`IndexedAreas`: read from the index and
/// the area_id index, no area row), and a pair is kept only where the
/// shape's own box holds the fix too (`BatchLocate.heldByShapeBox`), as on
/// the per-fix R*Tree path: a polygon's pairs are those of its own box (the
/// index's is a hair larger), a circle's those of its enclosing 32-gon's box
/// (narrower than the circle's own, which has slack). An area the
/// R*Tree holds no box for is read and prepared at the start, with its
/// shape's box, so one whose geometry cannot be read fails the batch before
/// any fix.
final class OnDemandAreas {
    let grid: CandidateGrid
    /// By grid index (area_id order): the row in gf_areas, and the area once prepared.
    private let rows: [Int64]
    private(set) var prepared: [JudgedArea?]
    /// The same areas unretained (`prepared` keeps them alive): the locating
    /// threads visit them without reference counting, whose atomic writes to
    /// areas both cores read would make the cores contend for them.
    private(set) var handles: [Unmanaged<JudgedArea>?]
    /// Wall time spent in `prepare`, all calls.
    private(set) var preparingSeconds = 0.0
    /// By grid index: whether `prepare` already lists the area (all false between calls).
    private var asking: [Bool]
    private let defaultConfidence: Double
    private let read: Statement
    private let db: Connection

    /// The columns `AreaStore.area` reads, without what a location does not
    /// read: the properties, the name and group, and a circle's geom (its
    /// enclosing polygon; a circle is judged from its centre and radius).
    private static let columns = AreaStore.Column.list(reading: [.properties: "NULL", .name: "NULL", .group_id: "NULL",
                                                                 .geom: "CASE kind WHEN 'circle' THEN NULL ELSE geom END"])

    init(_ db: Connection) throws {
        self.db = db
        defaultConfidence = try Settings(db).defaultConfidence()
        read = try db.prepare("SELECT \(Self.columns) FROM gf_areas WHERE id = ?1")
        let indexed = try db.inReadTransaction { try IndexedAreas(db) }
        var items = indexed.items, rowOf = indexed.rows
        var early: [(Int64, AreaDefinition)] = []
        for (row, id) in indexed.unindexed {
            let definition = try Self.definition(read, row: row, id: id)
            items.append((id, definition.shape.boundingBox))
            rowOf.append(row)
            early.append((row, definition))
        }
        if early.isEmpty {
            grid = CandidateGrid(items)
            rows = rowOf
        } else {
            // The grid sorts the areas by area_id; the row ids follow the same order.
            let order = items.indices.sorted { items[$0].0.utf8Precedes(items[$1].0) }
            grid = CandidateGrid(order.map { items[$0] })
            rows = order.map { rowOf[$0] }
        }
        prepared = [JudgedArea?](repeating: nil, count: rows.count)
        handles = [Unmanaged<JudgedArea>?](repeating: nil, count: rows.count)
        asking = [Bool](repeating: false, count: rows.count)
        try CandidateGrid.requireDistinctIds(grid.ambiguousIds)
        if !early.isEmpty {
            let at = Dictionary(rows.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            for (row, definition) in early {
                if let i = at[row] { keep(JudgedArea(definition: definition, defaultConfidence: defaultConfidence, conditions: []), at: i) }
            }
        }
    }

    /// The area at `row` as `AreaStore.area` reads it (its errors included).
    private static func definition(_ read: Statement, row: Int64, id: String) throws -> AreaDefinition {
        try read.bind([.integer(row)])
        defer { read.reset() }
        guard try read.step() else { throw removed(id, row: row) }
        return try AreaStore.area(read.row)
    }

    /// An area whose box was read at the start, and whose row another
    /// connection removed (or renumbered) before a fix reached it: the batch
    /// reads its rows as it goes, not in one snapshot.
    private static func removed(_ id: String, row: Int64) -> CatalogError {
        CatalogError("area \(Echo.quoted(id)) (row \(row)) was removed or changed while the batch ran: run the batch again")
    }

    /// Prepares, on every core, the areas at these grid indices that are
    /// not prepared yet (each once, whatever the repeats). The caller finds
    /// them in its own walk of the grid (`BatchLocate.locate` sets a fix's
    /// unprepared candidates aside and judges them after this), so every fix
    /// is walked once.
    func prepare(_ indices: [Int]) throws {
        let started = BatchLocate.now()
        defer { preparingSeconds += BatchLocate.now() - started }
        var wanted: [Int] = []
        for i in indices where prepared[i] == nil && !asking[i] { asking[i] = true; wanted.append(i) }
        defer { for i in wanted { asking[i] = false } }
        guard !wanted.isEmpty else { return }
        // Rows in their table's order, so the reads walk the file forward; each
        // row's values are copied out here (SQLite, one thread) and decoded
        // and prepared on a second thread while the next rows are read, then
        // on both (`WorkQueue`).
        wanted.sort { rows[$0] < rows[$1] }
        let made = Made(count: wanted.count), confidence = defaultConfidence
        let queue = WorkQueue<(start: Int, rows: [[SQLiteValue]])> { batch in
            for (j, values) in batch.rows.enumerated() {
                made.results[batch.start + j] = Result {
                    JudgedArea(definition: try AreaStore.area(values), defaultConfidence: confidence, conditions: [])
                }
            }
        }
        // One read transaction for all of them (`inReadTransaction`).
        try db.inReadTransaction {
            var batch: (start: Int, rows: [[SQLiteValue]]) = (0, [])
            for (k, i) in wanted.enumerated() {
                try read.bind([.integer(rows[i])])
                defer { read.reset() }
                guard try read.step() else { throw Self.removed(grid.ids[i], row: rows[i]) }
                batch.rows.append(read.row)
                if batch.rows.count == 128 || k == wanted.count - 1 {
                    queue.add(batch)
                    batch = (k + 1, [])
                }
            }
        }
        queue.finish()
        for (k, i) in wanted.enumerated() {
            guard let result = made.results[k] else { continue }
            keep(try result.get(), at: i)
        }
    }

    /// The areas a `prepare` builds, by their place in its list: each
    /// written by the thread that built it (threads write distinct places of
    /// one buffer, never a Swift array's shared storage), read by the caller
    /// once all are built.
    private final class Made: @unchecked Sendable {
        let results: UnsafeMutableBufferPointer<Result<JudgedArea, Error>?>
        init(count: Int) {
            results = .allocate(capacity: count)
            results.initialize(repeating: nil)
        }
        deinit { results.deinitialize().deallocate() }
    }

    private func keep(_ area: JudgedArea, at i: Int) {
        prepared[i] = area
        handles[i] = Unmanaged.passUnretained(area)
    }
}
