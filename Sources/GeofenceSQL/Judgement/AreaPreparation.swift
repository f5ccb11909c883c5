#if canImport(Glibc)
import Glibc
#endif
import GeofenceCore

/// Every area of the catalog read, decoded and prepared at once, with the
/// in-memory grid and its masks, for a batch that will meet most areas.
///
/// Why: met one by one, each area is read with two queries and prepared
/// under the catalog's lock, so one thread at a time, and the first chunk of
/// a batch pays for all of them. Here it is one scan
/// of each table that also decodes each row (`scan`, SQLite), and then
/// preparing and masking on every core (`build`, pure Swift).
///
/// `AreaPreparation` runs both on a thread of its own while the batch's
/// fixes are read and staged, which on two cores costs about as much as the
/// reading alone. SQLite is used by one thread at a time: the preparation's
/// thread until it has scanned, and the caller's thread waits for that
/// (`waitUntilRead`) before it touches the connection.
struct ScannedCatalog {
    var boxes: [(String, BoundingBox)]
    /// Beside each of `boxes`: the row of `definitions` it is the box of.
    var boxRows: [Int]
    /// Every row of gf_areas, nil for one that cannot be read (`loadArea`
    /// reads it again, and reports why, if a fix meets it).
    var definitions: [AreaDefinition?]
    /// The stored conditions by area id, an area's implied pair merged in.
    var conditions: [String: [ConditionDefinition]]
    /// Beside each row of `definitions`: the first id of its implied pair
    /// (`ImpliedConditions`) where it has no stored condition, else nil.
    /// Most catalogs' areas have only their pair: kept by row, they are no
    /// entry of a dictionary keyed by id (a hash of the id to make it, and
    /// again to find it, for every area of the catalog).
    var implied: [Int64?]
    /// Every zone named by an area or a condition, nil for one that does not load.
    var zones: [String: TimeZone?]

    /// A named zone as scanned; one that did not load is an error here.
    func zone(_ name: String) throws -> TimeZone {
        guard let z = zones[name] ?? nil else { throw CatalogError("time zone \(Echo.quoted(name)) did not load") }
        return z
    }
}

extension SQLCatalog {
    /// Reads and prepares every area now. Call before judging starts.
    public func prepareAllAreas() throws { try build(try scan()) }

    /// The index's boxes, gf_areas and the stored conditions, read in one
    /// scan each; an area's implied conditions are read with its row.
    func scan() throws -> ScannedCatalog {
        var conditions: [String: [ConditionDefinition]] = [:]
        let conditionRows = try db.prepare("SELECT \(ConditionStore.columns) FROM \(tables.conditionRows)")
        while try conditionRows.step() {
            let c = try ConditionStore.condition(conditionRows.row)
            conditions[c.areaId, default: []].append(c)
        }
        let boxesByRow = try BoxesByRow(db, tables)
        // The row id after the columns `AreaStore.area` reads (it joins each
        // area to its index box without a second scan), then the implied conditions' id.
        let areaRows = try db.prepare("SELECT \(AreaStore.judgedColumns), id, \(ImpliedConditions.column) FROM \(tables.areas)")
        var definitions: [AreaDefinition?] = []
        var implied: [Int64?] = []
        var boxes: [(String, BoundingBox)] = [], boxRows: [Int] = []
        boxes.reserveCapacity(boxesByRow.count)
        boxRows.reserveCapacity(boxesByRow.count)
        let geom = AreaStore.Column.geom.rawValue, rowId = AreaStore.Column.allCases.count
        while try areaRows.step() {
            // Each row made an area here, its geometry decoded straight from
            // SQLite's bytes: kept as rows of values and BLOBs until the
            // preparation's threads decoded them, they would be a second copy
            // of the catalog in fresh memory, freed right after. (A circle's
            // geom is only its enclosing polygon: not read.)
            let decoded = areaRows.value(AreaStore.Column.kind).string == "circle" ? nil
                : try? areaRows.withBlob(geom) { $0.isEmpty ? nil : try SpatiaLiteBlob.decodeAreal($0).polygons }
            let id = try CatalogError.areaId(areaRows, AreaStore.Column.area_id.rawValue, row: areaRows.value(rowId).int64)
            let first = try ImpliedConditions.first(areaRows.value(rowId + 1), area: id)
            if let first, !conditions.isEmpty, let stored = conditions[id] {
                conditions[id] = ImpliedConditions.merged(stored, first: first, area: id)
                implied.append(nil)
            } else {
                implied.append(first)
            }
            let row = (0..<rowId + 1).map { $0 == geom && decoded != nil ? .null : areaRows.value($0) }
            if let r = row[rowId].int64, let box = boxesByRow[r] {
                boxes.append((id, box))
                boxRows.append(definitions.count)
            }
            definitions.append(try? AreaStore.area(row, polygons: decoded))
        }
        var zoneOf: [String: TimeZone?] = [:]
        for name in definitions.compactMap({ $0?.timezone }) + conditions.values.joined().compactMap(\.timezone) where zoneOf[name] == nil {
            zoneOf[name] = .some(try? zones.zone(name))
        }
        return ScannedCatalog(boxes: boxes, boxRows: boxRows, definitions: definitions, conditions: conditions, implied: implied, zones: zoneOf)
    }

    /// Prepares the scanned areas and makes the grid with its
    /// masks, on every core. An area that cannot be read is left out: met,
    /// it fails the batch with its error from `loadArea`, as it would have
    /// without this; never met, it does not.
    /// `madeGrid` gets the grid's cells before any area is prepared.
    func build(_ s: ScannedCatalog, madeGrid: (CandidateGrid) -> Void = { _ in }) throws {
        let definitions = s.definitions
        let order = CandidateGrid.order(of: s.boxes)
        let grid = CandidateGrid(s.boxes, order: order)
        try CandidateGrid.requireDistinctIds(grid.ambiguousIds)
        madeGrid(grid)
        // Each row's grid index (-1: none, the row has no box), through the
        // grid's order: an area's index by its id is a binary search of
        // strings, a thousand instructions or more an area.
        var gridIndex = [Int32](repeating: -1, count: definitions.count)
        for (g, k) in order.enumerated() { gridIndex[s.boxRows[k]] = Int32(g) }
        var prepared = [JudgedArea?](repeating: nil, count: definitions.count)
        var outside = [UInt64](repeating: 0, count: grid.entryCount), inside = outside
        var byIndex = [JudgedArea?](repeating: nil, count: grid.ids.count)
        let width = min(Parallel.width, max(1, definitions.count / 1000))
        let defaults = self.defaults
        // A zone that did not load leaves the area to `loadArea`, which reports it.
        func judged(_ i: Int) -> JudgedArea? {
            guard let a = definitions[i] else { return nil }
            // Stored conditions come merged with their pair (`scan`); `implied` is the pair of an area with none.
            let stored = s.conditions.isEmpty ? [] : s.conditions[a.areaId] ?? []
            return try? ImpliedConditions.judgedArea(a, stored: stored, first: s.implied[i], defaults: defaults, load: s.zone)
        }
        prepared.withUnsafeMutableBufferPointer { out in
            byIndex.withUnsafeMutableBufferPointer { byIndexOut in
                outside.withUnsafeMutableBufferPointer { outsideOut in
                    inside.withUnsafeMutableBufferPointer { insideOut in
                        let (out, byIndexOut) = (UnsafeMutableBufferPointerBox(out), UnsafeMutableBufferPointerBox(byIndexOut))
                        let (outsideOut, insideOut) = (UnsafeMutableBufferPointerBox(outsideOut), UnsafeMutableBufferPointerBox(insideOut))
                        // Contiguous runs of rows, so rows next to each other in
                        // gf_areas (import order) are prepared, and allocated,
                        // together; many runs taken in turn, not one per thread,
                        // as areas differ in cost and equal shares would leave
                        // one thread working alone at the end.
                        let runs = width == 1 ? 1 : width * 16
                        Parallel.share(Array(0..<runs), width: width) { _, r in
                            for i in (definitions.count * r / runs)..<(definitions.count * (r + 1) / runs) {
                                guard let area = judged(i) else { continue }
                                out.buffer[i] = area
                                // Its masks now, while its shape is still in the cache
                                // (one row is one grid index: threads write apart).
                                let g = Int(gridIndex[i])
                                guard g >= 0 else { continue }
                                grid.writeMasks(ofArea: g, area.shape, outside: outsideOut.buffer, inside: insideOut.buffer)
                                byIndexOut.buffer[g] = area
                            }
                        }
                    }
                }
            }
        }
        // The id dictionary and the plan's areas side by side: each is one
        // pass over every area, and neither needs the other.
        let planned = Box<PlannedAreas?>(nil)
        let masked = grid.withMasks(outside: outside, inside: inside)
        Parallel.run(2) { w in
            if w == 0 {
                self.lock.with {
                    self.areas.reserveCapacity(self.areas.count + prepared.count)
                    for case let a? in prepared { self.areas[a.definition.areaId] = a }
                }
            } else {
                // An area left out above (unreadable) is left to `loadArea` as
                // ever: no plan then, since a plan takes a missing area for a deleted one.
                let all = byIndex.compactMap { $0 }
                planned.value = all.count == byIndex.count ? PlannedAreas(grid: masked, areas: all) : nil
            }
        }
        self.grid = masked
        plannedAreas = planned.value
    }
}

/// `scan` and `build` on a thread of their own (see above). The caller must
/// not use the connection before `waitUntilRead`, nor the catalog before
/// `finish`; dropping it unfinished waits for the thread.
final class AreaPreparation: AllAreasPreparation {
    private let scanned = Handoff<Bool>(capacity: 1)
    private let gridMade = Handoff<CandidateGrid>(capacity: 1)
    private let failure = Box<Error?>(nil)
    private var thread: pthread_t?
    private var waited = false

    init(_ catalog: SQLCatalog) {
        let (scanned, gridMade, failure) = (self.scanned, self.gridMade, self.failure)
        let work = {
            defer { scanned.finish(); gridMade.finish() }
            do {
                let s = try catalog.scan()
                _ = scanned.put(true)
                try catalog.build(s) { _ = gridMade.put($0) }
                // The caller goes on before what was scanned is freed: freeing
                // a catalog's rows of values is work it need not wait for.
                withExtendedLifetime(s) { scanned.finish() }
            } catch {
                failure.value = error
            }
        }
        thread = Parallel.spawn(work)
        if thread == nil { work() }
    }

    deinit {
        try? finish()
        if let t = thread { Parallel.join(t) }
    }

    /// Returns once the preparation no longer uses the connection.
    func waitUntilRead() {
        guard !waited else { return }
        waited = true
        _ = scanned.take()
    }

    /// The grid's cells, as soon as they are known and before the areas are
    /// prepared (the masks added later do not move them): the caller can
    /// order its fixes by cell meanwhile. Nil if the preparation failed first.
    func cells() -> CandidateGrid? { madeCells }
    private lazy var madeCells: CandidateGrid? = gridMade.take()

    /// Waits for the preparation; throws what stopped it (a failed scan,
    /// area ids judgement cannot tell apart). The thread may still be
    /// freeing what it scanned: `deinit` joins it.
    func finish() throws {
        waitUntilRead()
        while scanned.take() != nil {}
        if let e = failure.value { throw e }
    }
}
