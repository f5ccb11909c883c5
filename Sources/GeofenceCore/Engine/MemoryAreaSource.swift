/// An `AreaSource` over areas already prepared and held in memory: the
/// door for a caller that has the catalog itself (a Spark task's read-only
/// copy, a threshold sweep over one catalog, the engine's own tests), with
/// no database behind it.
///
///     let source = MemoryAreaSource(judgedAreas)
///     let engine = BatchEngine(BatchDoors(areas: source, states: myStates, sink: mySink))
///
/// Every strategy works as it does over a database: `prepareAllAreas`
/// builds the grid with its masks and the plan's areas; on demand, each
/// chunk's areas are placed before it is judged; per fix, the grid answers.
/// Nothing is ever dropped (`boundAreas`): the areas are the caller's.
public final class MemoryAreaSource: AreaSource {
    public let lock = Lock()
    public var perFixStrategy = CandidateStrategy.rtreePerFix
    private let byId: [String: JudgedArea]
    private let index: CandidateGrid
    public private(set) var grid: CandidateGrid?
    public private(set) var plannedAreas: PlannedAreas?

    /// Fails for two area ids that differ only in Unicode normalization (`CandidateGrid.ambiguousIds`).
    public init(_ areas: [JudgedArea]) throws {
        var byId: [String: JudgedArea] = [:]
        for a in areas { byId[a.definition.areaId] = a }
        self.byId = byId
        index = CandidateGrid(areas.map { ($0.definition.areaId, $0.shape.boundingBox) })
        try CandidateGrid.requireDistinctIds(index.ambiguousIds)
    }

    public var areaCount: Int { byId.count }

    public func candidateAreas(at p: LonLat) throws -> [String] { (grid ?? index).candidates(at: p) }

    public func area(_ id: String) throws -> JudgedArea? { byId[id] }

    public func boundAreas(to limit: Int) -> Int { 0 }

    /// The grid with every area's masks, and every area by grid index.
    public func prepareAllAreas() throws {
        guard plannedAreas == nil else { return }
        let areas = index.ids.map { byId[$0]! }
        var outside = [UInt64](repeating: 0, count: index.entryCount), inside = outside
        outside.withUnsafeMutableBufferPointer { o in
            inside.withUnsafeMutableBufferPointer { n in
                for (i, a) in areas.enumerated() { index.writeMasks(ofArea: i, a.shape, outside: o, inside: n) }
            }
        }
        let masked = index.withMasks(outside: outside, inside: inside)
        grid = masked
        plannedAreas = PlannedAreas(grid: masked, areas: areas)
    }

    public func startPreparingAll() -> AllAreasPreparation { Prepared(self) }

    public func openOnDemand() throws -> OnDemandPreparation {
        grid = index
        return OnDemand(PlannedAreas(grid: index), byId)
    }

    public func takeAreas() -> Any { (grid as Any, plannedAreas as Any) }

    /// Prepares on `finish`, on the calling thread: nothing is read, so
    /// nothing overlaps the reading of fixes.
    private final class Prepared: AllAreasPreparation {
        let source: MemoryAreaSource
        init(_ source: MemoryAreaSource) { self.source = source }
        func waitUntilRead() {}
        func cells() -> CandidateGrid? { source.index }
        func finish() throws { try source.prepareAllAreas() }
    }

    /// Places every area a chunk reaches before it is judged (none is ever removed).
    private final class OnDemand: OnDemandPreparation {
        let planned: PlannedAreas
        let byId: [String: JudgedArea]
        init(_ planned: PlannedAreas, _ byId: [String: JudgedArea]) { self.planned = planned; self.byId = byId }

        func prepare(reachedBy fixes: [Fix], stays: [SubjectState], limit: Int) throws {
            let grid = planned.grid
            var reached: [Int] = []
            for f in fixes { grid.forEachCandidate(at: f.position) { reached.append($0) } }
            for s in stays { for id in s.stays.keys { if let i = grid.index(of: id) { reached.append(i) } } }
            for i in reached where !planned.isPlaced(i) { planned.place(byId[grid.ids[i]]!, at: i) }
        }
    }
}
