/// A catalog held in memory: for tests, for batch location, and for a task
/// that judges a share of the subjects against its own read-only copy of the
/// areas. After the first lookup (which builds the grid) it is only read, so
/// threads may share it.
public final class MemoryCatalog: JudgeCatalog {
    private var areas: [String: JudgedArea] = [:]
    private var boxes: [(String, BoundingBox)] = []
    private var grid: CandidateGrid?
    /// The areas in the grid's order (area_id order), so a lookup by grid index needs no hashing.
    private var ordered: [JudgedArea] = []

    public init(_ areas: [JudgedArea] = []) { for a in areas { add(a) } }

    public func add(_ a: JudgedArea) {
        areas[a.definition.areaId] = a
        boxes.append((a.definition.areaId, a.shape.boundingBox))
        grid = nil
    }

    /// Builds the grid now (it is otherwise built on the first lookup), so that
    /// threads sharing the catalog afterwards only read it.
    public func buildIndex() {
        guard grid == nil else { return }
        let g = CandidateGrid(boxes)
        ordered = g.ids.map { areas[$0]! }
        grid = g
    }

    /// `CandidateGrid.ambiguousIds` of this catalog's areas.
    public var ambiguousIds: (String, String)? {
        buildIndex()
        return grid!.ambiguousIds
    }

    public func candidateAreas(at p: LonLat) throws -> [String] {
        buildIndex()
        return grid!.candidates(at: p)
    }

    public func area(_ id: String) throws -> JudgedArea? { areas[id] }

    /// Every area whose box holds `p`, in area_id order, by grid index: no
    /// dictionary lookup or string array per candidate (judgement tasks and
    /// the batch locate path).
    public func forEachCandidate(at p: LonLat, _ body: (_ id: String, _ area: JudgedArea?, _ hint: CandidateHint) throws -> Void) rethrows {
        buildIndex()
        let ids = grid!.ids
        try forEachCandidateIndex(at: p) { try body(ids[$0], $1, .none) }
    }

    /// The same by position in area_id order (0..<count), with no string at
    /// all: a batch keeps positions and names only the pairs it reports
    /// (`areaId(at:)`). Call `buildIndex()` first.
    @inline(__always)
    public func forEachCandidateIndex(at p: LonLat, _ body: (Int, JudgedArea) throws -> Void) rethrows {
        try ordered.withUnsafeBufferPointer { areas in
            try grid!.forEachCandidate(at: p) { try body($0, areas[$0]) }
        }
    }

    /// The area_id at a position of `forEachCandidateIndex`.
    public func areaId(at index: Int) -> String { grid!.ids[index] }
}
