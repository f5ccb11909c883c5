import GeofenceCore

/// The catalog as judgement sees it, read from a geofence database (the
/// engine's `AreaSource`): R*Tree candidates per point, and each area
/// prepared once per run (with its conditions and their time zones
/// resolved); in bulk through AreaPreparation.swift and OnDemandCatalog.swift.
public final class SQLCatalog: AreaSource {
    let db: Connection
    /// The R*Tree, asked for a point's candidates or a window's boxes.
    private let rtree: RTreeBoxes
    /// Windows of the index around recent fixes, with `.windows` (see `CandidateWindows`).
    private var windows = CandidateWindows()
    /// How a fix met without a grid finds its candidates: `.windows` for a
    /// catalog that lives across many single checks (gf_check's session,
    /// dropped with it on any change of the catalog), else one R*Tree query per fix.
    public var perFixStrategy = CandidateStrategy.rtreePerFix
    var areas: [String: JudgedArea?] = [:]
    let zones = TimeZoneCache()
    private let areaStore: AreaStore
    private let conditionStore: ConditionStore
    /// The confidence and zone an area without its own takes.
    let defaults: CatalogDefaults

    /// The catalog's tables as its reads name them (`CatalogTables`).
    let tables: CatalogTables

    public init(_ db: Connection) throws {
        self.db = db
        tables = try CatalogTables(db)
        areaStore = AreaStore(db, tables: tables)
        conditionStore = ConditionStore(db, tables: tables)
        rtree = try RTreeBoxes(db, tables)
        let settings = Settings(db, tables: tables)
        let zoneName = try settings.get("default_timezone") ?? "UTC"
        defaults = CatalogDefaults(confidence: try settings.defaultConfidence(), zone: try zones.zone(zoneName))
    }

    /// The R*Tree's boxes in memory, for a batch large enough to repay reading them all.
    public internal(set) var grid: CandidateGrid?

    /// Every area by grid index, once all are prepared (`prepareAllAreas`):
    /// what judging with a `CandidatePlan` reads.
    public internal(set) var plannedAreas: PlannedAreas?

    public func startPreparingAll() -> AllAreasPreparation { AreaPreparation(self) }

    public func openOnDemand() throws -> OnDemandPreparation { try OnDemandCatalog(self) }

    /// Reads every area's index box into a `CandidateGrid`; later lookups make no query.
    /// The run's transaction keeps the catalog fixed while the grid is in use.
    public func loadIndexIntoMemory() throws {
        let g = CandidateGrid(try IndexedAreas(db, tables).items)
        try CandidateGrid.requireDistinctIds(g.ambiguousIds)
        grid = g
        plannedAreas = nil
    }

    /// Counted through SQLite's cache: mapped, the count's pages stayed resident (`Connection.unmapped`).
    public var areaCount: Int { get throws { try db.unmapped { try areaStore.count } } }

    /// Judgement threads share this catalog: the area cache and every statement
    /// are used under this lock; the grid is read-only once built.
    public let lock = Lock()

    public func candidateAreas(at p: LonLat) throws -> [String] {
        if let grid { return grid.candidates(at: p) }
        if perFixStrategy == .windows {
            try readIndexOnceMissesRepay()
            if let grid { return grid.candidates(at: p) }
            return try lock.with { try windows.candidates(at: p, in: rtree) }
        }
        return try lock.with { try rtree.ids(holding: p) }
    }

    /// A session whose lookups keep missing its windows (many subjects
    /// checked in turn, moving faster than a window's width) reads the whole
    /// index into memory once, as a batch does, when
    /// `CandidateStrategy.readsWholeIndex` says so. A catalog the whole read
    /// refuses keeps its windows: two area_ids that differ only in
    /// normalization (which the in-memory index cannot tell apart), or a row
    /// whose area_id is not text (`CatalogError`), which only a fix that
    /// meets it must fail on, as through the windows and in a batch of a
    /// few fixes; the call that switches would fail on it instead, and so
    /// would one every 64 misses after (its failure drops the session).
    private func readIndexOnceMissesRepay() throws {
        guard grid == nil, !gridRefused else { return }
        guard try CandidateStrategy.readsWholeIndex(misses: windows.misses, boxesRead: windows.boxesRead, areas: sessionAreaCount) else { return }
        do {
            try lock.with { try loadIndexIntoMemory() }
        } catch is InputError {
            gridRefused = true
        } catch is CatalogError {
            gridRefused = true
        }
    }
    private var gridRefused = false
    private var countedAreas: Int?
    private func sessionAreaCount() throws -> Int {
        if let countedAreas { return countedAreas }
        let n = try areaCount
        countedAreas = n
        return n
    }

    /// Empties the catalog of its prepared areas and index and returns them
    /// (`BatchEngine.leaveAreasToExit`).
    public func takeAreas() -> Any {
        lock.with {
            defer { areas = [:]; grid = nil; plannedAreas = nil; generation += 1 }
            return (areas, grid as Any, plannedAreas as Any)
        }
    }

    public func area(_ id: String) throws -> JudgedArea? {
        try lock.with { try loadArea(id) }
    }

    /// Bumped whenever the prepared areas are dropped, so that the judging
    /// threads' own caches (`WorkerCatalog`) let go of theirs too.
    private var generation = 0

    /// Drops the prepared areas if more than `limit` are held (memory would
    /// otherwise grow with every area the batch meets); returns the
    /// generation after. Safe at any time: a thread judging keeps the areas
    /// it holds alive until it lets go of them.
    public func boundAreas(to limit: Int) -> Int {
        lock.with {
            if areas.count > limit { areas.removeAll(); plannedAreas = nil; generation += 1 }
            return generation
        }
    }

    private func loadArea(_ id: String) throws -> JudgedArea? {
        if let cached = areas[id] { return cached }
        var judged: JudgedArea?
        if let (a, implied) = try areaStore.getWithImplied(id, judging: true) {
            let stored = try conditionStore.stored(area: id)
            do {
                judged = try ImpliedConditions.judgedArea(a, stored: stored, first: implied, defaults: defaults, load: zones.zone)
            } catch let e as UnloadableZone {
                throw CatalogError(e.description)
            }
        }
        areas[id] = judged
        return judged
    }
}

/// The catalog's R*Tree as a `BoxIndex`: one query per point or window;
/// used under `SQLCatalog.lock`.
struct RTreeBoxes: BoxIndex {
    private let point, window: Statement

    init(_ db: Connection, _ tables: CatalogTables) throws {
        point = try db.prepare("""
            SELECT a.area_id, a.id FROM \(tables.index) AS r CROSS JOIN \(tables.areas) AS a ON a.id = r.pkid
            WHERE r.xmin <= ?1 AND r.xmax >= ?1 AND r.ymin <= ?2 AND r.ymax >= ?2
            """)
        window = try db.prepare("""
            SELECT a.area_id, \(RTreeBoxColumns.list("r")), a.id FROM \(tables.index) AS r CROSS JOIN \(tables.areas) AS a ON a.id = r.pkid
            WHERE r.xmin <= ?3 AND r.xmax >= ?1 AND r.ymin <= ?4 AND r.ymax >= ?2
            """)
    }

    func ids(holding p: LonLat) throws -> [String] {
        try point.bind([.real(p.lon), .real(p.lat)])
        var ids: [String] = []
        while try point.step() {
            ids.append(try CatalogError.areaId(point, 0, row: point.value(1).int64))
        }
        // In area_id order, as the judge merges them (`utf8Precedes`).
        return ids.sorted { $0.utf8Precedes($1) }
    }

    func boxes(meeting w: BoundingBox) throws -> [(String, BoundingBox)] {
        try window.bind([.real(w.minLon), .real(w.minLat), .real(w.maxLon), .real(w.maxLat)])
        var items: [(String, BoundingBox)] = []
        while try window.step() {
            items.append((try CatalogError.areaId(window, 0, row: window.value(5).int64), window.rtreeBox(from: 1)))
        }
        return items
    }
}

/// Index boxes looked up by row id. Row ids are usually 1...n (an import
/// numbers them so), and are then an array's indices, with no hashing per
/// row in the scan.
struct BoxesByRow {
    private var dense: [BoundingBox?] = []
    private var sparse: [Int64: BoundingBox] = [:]
    let count: Int

    /// The R*Tree's boxes, in one scan of the index.
    init(_ db: Connection, _ tables: CatalogTables) throws {
        let index = try db.prepare("SELECT pkid, \(RTreeBoxColumns.list()) FROM \(tables.index)")
        var rows: [Int64] = [], boxes: [BoundingBox] = []
        while try index.step() {
            guard let row = index.value(0).int64 else { continue }
            rows.append(row)
            boxes.append(index.rtreeBox(from: 1))
        }
        self.init(rows, boxes)
    }

    init(_ rows: [Int64], _ boxes: [BoundingBox]) {
        count = rows.count
        if let top = rows.max(), let bottom = rows.min(), bottom >= 0, top < 2 * Int64(rows.count) + 1024 {
            dense = [BoundingBox?](repeating: nil, count: Int(top) + 1)
            for (r, b) in zip(rows, boxes) { dense[Int(r)] = b }
        } else {
            sparse.reserveCapacity(rows.count)
            for (r, b) in zip(rows, boxes) { sparse[r] = b }
        }
    }

    subscript(row: Int64) -> BoundingBox? {
        if !dense.isEmpty { return row >= 0 && row < Int64(dense.count) ? dense[Int(row)] : nil }
        return sparse[row]
    }
}
