/// A catalog held in memory: for tests, for batch location, and for a task
/// that judges a share of the subjects against its own read-only copy of the
/// areas. After the first lookup (which builds the grid) it is only read, so
/// threads may share it.
public final class MemoryCatalog: JudgeCatalog {
    private var areas: [String: JudgedArea] = [:]
    private var boxes: [(String, BoundingBox)] = []
    private var grid: CandidateGrid?

    public init(_ areas: [JudgedArea] = []) { for a in areas { add(a) } }

    public func add(_ a: JudgedArea) {
        areas[a.definition.areaId] = a
        boxes.append((a.definition.areaId, a.shape.boundingBox))
        grid = nil
    }

    public func candidateAreas(at p: LonLat) throws -> [String] {
        if grid == nil { grid = CandidateGrid(boxes) }
        return grid!.candidates(at: p)
    }

    public func area(_ id: String) throws -> JudgedArea? { areas[id] }
}
