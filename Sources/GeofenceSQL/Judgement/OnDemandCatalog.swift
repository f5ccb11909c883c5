#if canImport(Glibc)
import Glibc
#endif
import GeofenceCore

/// The catalog of a judgement batch that does not prepare every area first
/// (a catalog larger than `BatchSettings.maxPreparedAreas`, or a batch with
/// fewer fixes than areas): every area's id and index box are read at the
/// start and the grid is built from them; before each chunk of fixes, the
/// areas the chunk needs and that are not yet prepared are read in bulk
/// (rows by row id, conditions by area) and prepared on every core, and the
/// chunk is then judged through the same plan (`CandidatePlan`,
/// `PlannedAreas`) as a catalog prepared whole.
///
/// What a chunk needs: every area whose box holds one of its fixes (the
/// plan's candidates), and every area in which one of its subjects has a
/// stay (an exit is judged however far away the fix is).
///
/// Why: met one at a time, each area was read with two queries and prepared
/// under the catalog's lock, which both judging threads waited for, and the
/// shared cache was emptied past `maxPreparedAreas` and filled again.
///
/// Memory: per area of the catalog, an id, a box, a row id, its grid entries
/// and an empty plan slot (~160 bytes); plus the prepared areas. Those a
/// chunk needs are all held while it is judged; between chunks at most
/// `limit` are kept: past it, the areas the next chunk does not need go
/// first (`prepare`).
///
/// The boxes are the R*Tree's, as every other batch path reads them, so a
/// fix meets the candidates it meets there and the output is the same.
final class OnDemandCatalog: OnDemandPreparation {
    let planned: PlannedAreas
    var grid: CandidateGrid { planned.grid }
    /// By grid index (area_id order): the area's row in gf_areas.
    private let rows: [Int64]
    /// Grid indices of the areas placed in `planned`.
    private var placed: [Int] = []
    private let readArea: Statement
    private let readConditions: Statement
    /// Asks whether gf_condition_rows has any row, again each time areas
    /// are read: a catalog whose areas have only their implied pairs
    /// (schema 12: no row), the commonest, then costs no seek per area for
    /// conditions. Asked with the rows, not once at the start: the run's
    /// own writes (a user's trigger on its notifications) may turn an
    /// area's implied pair into stored rows between two chunks, and an area
    /// read after that would otherwise have neither (red team). Nothing is
    /// written while areas are read (`BatchRun.judgeChunk`), so the answer
    /// and the rows are of one state of the catalog.
    private let anyStoredCondition: String
    private let zones: TimeZoneCache
    private let db: Connection
    private let defaults: CatalogDefaults

    /// The columns `AreaStore.area` reads, with neither the properties
    /// (judgement does not read them) nor a circle's geom (only its
    /// enclosing polygon, which `AreaStore.area` does not read).
    private static let columns = AreaStore.Column.list(reading: [.properties: "NULL", .geom: "CASE kind WHEN 'circle' THEN NULL ELSE geom END"])

    init(_ catalog: SQLCatalog) throws {
        let db = catalog.db
        self.db = db
        zones = catalog.zones
        defaults = catalog.defaults
        readArea = try db.prepare("SELECT \(Self.columns), \(ImpliedConditions.column) FROM \(catalog.tables.areas) WHERE id = ?1")
        readConditions = try db.prepare("SELECT \(ConditionStore.columns) FROM \(catalog.tables.conditionRows) WHERE area_id = ?1 ORDER BY condition_id")
        anyStoredCondition = "SELECT EXISTS (SELECT 1 FROM \(catalog.tables.conditionRows))"
        let indexed = try db.unmapped { try IndexedAreas(db, catalog.tables) }
        let grid = CandidateGrid(indexed.items)
        try CandidateGrid.requireDistinctIds(grid.ambiguousIds)
        rows = indexed.rows
        planned = PlannedAreas(grid: grid)
    }

    /// Prepares every area `fixes` and the stays of `states` need that is
    /// not prepared yet. Past `limit` prepared areas, first lets go of those
    /// these fixes do not need.
    func prepare(reachedBy fixes: [Fix], stays states: [SubjectState], limit: Int) throws {
        var needed = candidates(of: fixes)
        for s in states {
            for key in s.stays.keys {
                let k = grid.orderKey(of: key)
                if k & 1 == 1 { needed[k >> 7] |= 1 << UInt64((k >> 1) & 63) }
            }
        }
        var missing: [Int] = []
        for (w, word) in needed.enumerated() where word != 0 {
            var bits = word
            while bits != 0 {
                let i = w * 64 + bits.trailingZeroBitCount
                bits &= bits - 1
                if !planned.isPlaced(i) { missing.append(i) }
            }
        }
        guard !missing.isEmpty else { return }
        // Past the limit, the areas these fixes do not need go, the longest
        // held first, until the limit is met (or none is left to go).
        var excess = placed.count + missing.count - limit
        if excess > 0 {
            placed.removeAll { i in
                guard excess > 0, needed[i >> 6] & (1 << UInt64(i & 63)) == 0 else { return false }
                planned.empty(i)
                excess -= 1
                return true
            }
        }
        // Rows in their table's order, so the reads walk the file forward;
        // in batches, so the rows read and not yet prepared stay few.
        missing.sort { rows[$0] < rows[$1] }
        try db.unmapped { try readAndPrepare(missing) }
    }

    /// Areas read from SQLite at most before they are handed on to be
    /// prepared: a few MB of rows.
    static let batchAreas = 8192

    /// The grid indices of every area whose box holds one of `fixes`, as a
    /// bit set; the grid is walked on every core.
    private func candidates(of fixes: [Fix]) -> [UInt64] {
        let words = (grid.ids.count + 63) / 64
        let width = min(Parallel.width, max(1, fixes.count / 5000))
        var parts = [[UInt64]](repeating: [], count: width)
        let grid = self.grid
        fixes.withUnsafeBufferPointer { fixes in
            parts.withUnsafeMutableBufferPointer { parts in
                let (fixes, out) = (UnsafeBufferPointerBox(fixes), UnsafeMutableBufferPointerBox(parts))
                Parallel.run(width) { w in
                    var bits = [UInt64](repeating: 0, count: words)
                    let n = fixes.buffer.count
                    bits.withUnsafeMutableBufferPointer { bits in
                        for k in (n * w / width)..<(n * (w + 1) / width) {
                            grid.forEachCandidate(at: fixes.buffer[k].position) { i in bits[i >> 6] |= 1 << UInt64(i & 63) }
                        }
                    }
                    out.buffer[w] = bits
                }
            }
        }
        var all = parts[0]
        for part in parts.dropFirst() { for w in all.indices { all[w] |= part[w] } }
        return all
    }

    /// Rows and conditions of a run of areas, read and not yet prepared.
    private struct ReadBatch: @unchecked Sendable {
        /// Where the batch's first area is in the list being prepared.
        var start: Int
        var values: [[SQLiteValue]] = []
        var conditions: [ReadConditions] = []
    }

    /// An area's conditions as read: listed with their zones, or only its
    /// implied pair, judged in the area's zone (made without a list:
    /// `JudgedArea.init(definition:defaultConfidence:impliedPair:zone:)`).
    private enum ReadConditions {
        case listed([(ConditionDefinition, TimeZone)])
        case impliedPair(Int64, TimeZone)
    }

    /// An area's stored conditions and implied pair (`implied`: its IN's
    /// id), each with the zone it is judged in; a zone that does not load
    /// is the catalog's fault, naming its row.
    private func zoned(_ conditions: [ConditionDefinition], implied: Int64?, areaZone name: String?, area: String) throws -> ReadConditions {
        do {
            let areaZone = try defaults.areaZone(name, area: area, load: zones.zone)
            if conditions.isEmpty, let implied { return .impliedPair(implied, areaZone) }
            let all = ImpliedConditions.merged(conditions, first: implied, area: area)
            return .listed(try all.map { ($0, try CatalogDefaults.conditionZone($0, areaZone: areaZone, load: zones.zone)) })
        } catch let e as UnloadableZone { throw CatalogError(e.description) }
    }

    /// Reads the areas at these grid indices (their rows and conditions) on
    /// this thread, SQLite's, while other threads prepare those already
    /// read (a few batches ahead at most); this thread then helps prepare
    /// the rest, and places them all. Fails as `SQLCatalog.area` would for
    /// an area that cannot be read or whose time zone does not load.
    private func readAndPrepare(_ wanted: [Int]) throws {
        let read = Handoff<ReadBatch>(capacity: 2)
        let made = UnsafeMutableBufferPointer<Result<JudgedArea, Error>?>.allocate(capacity: wanted.count)
        made.initialize(repeating: nil)
        defer { made.deinitialize().deallocate() }
        let confidence = defaults.confidence
        let out = UnsafeMutableBufferPointerBox(made)
        // Each batch's results go to its own places in `made`: threads write apart.
        let prepare = {
            while let b = read.take() {
                for k in b.values.indices {
                    out.buffer[b.start + k] = Result {
                        let definition = try AreaStore.area(b.values[k])
                        switch b.conditions[k] {
                        case .listed(let all): return JudgedArea(definition: definition, defaultConfidence: confidence, conditions: all)
                        case .impliedPair(let first, let zone):
                            return JudgedArea(definition: definition, defaultConfidence: confidence, impliedPair: first, zone: zone)
                        }
                    }
                }
            }
        }
        // As many threads as judging uses, this one included; batches small
        // enough that every thread gets some.
        let helpers = wanted.count >= 64 ? Parallel.width - 1 : 0
        let batchSize = min(Self.batchAreas, max(16, wanted.count / (4 * (helpers + 1))))
        var threads: [pthread_t] = []
        for _ in 0..<helpers { if let t = Parallel.spawn(prepare) { threads.append(t) } }
        // With no thread to take them, every batch waits for this one.
        if threads.isEmpty { read.removeLimit() }
        defer {
            read.finish()
            prepare()
            for t in threads { Parallel.join(t) }
        }
        let hasStoredConditions = try db.scalar(anyStoredCondition).int64 == 1
        var batch = ReadBatch(start: 0)
        for (n, i) in wanted.enumerated() {
            try readArea.bind([.integer(rows[i])])
            defer { readArea.reset() }
            guard try readArea.step() else { throw CatalogError("area row \(rows[i]) vanished while the batch ran") }
            let row = readArea.row
            var stored: [ConditionDefinition] = []
            if hasStoredConditions {
                try readConditions.bind([.text(grid.ids[i])])
                defer { readConditions.reset() }
                while try readConditions.step() { stored.append(try ConditionStore.condition(readConditions.row)) }
            }
            let implied = try ImpliedConditions.first(row[AreaStore.Column.allCases.count], area: grid.ids[i])
            let mine = try zoned(stored, implied: implied, areaZone: NamedRow<AreaStore.Column>(row)[.timezone].string, area: grid.ids[i])
            batch.values.append(row)
            batch.conditions.append(mine)
            if batch.values.count == batchSize || n == wanted.count - 1 {
                _ = read.put(batch)
                batch = ReadBatch(start: n + 1)
            }
        }
        read.finish()
        prepare()
        for t in threads { Parallel.join(t) }
        threads = []
        for (k, i) in wanted.enumerated() {
            guard let result = made[k] else { continue }
            planned.place(try result.get(), at: i)
            placed.append(i)
        }
    }
}
