/// A catalog held in memory: for tests, and for a task that judges a share
/// of the subjects against its own read-only copy of the areas.
public final class MemoryCatalog: JudgeCatalog {
    private var areas: [String: JudgedArea] = [:]
    private var boxes: [(String, BoundingBox)] = []

    public init(_ areas: [JudgedArea] = []) { for a in areas { add(a) } }

    public func add(_ a: JudgedArea) {
        areas[a.definition.areaId] = a
        boxes.append((a.definition.areaId, a.shape.boundingBox))
    }

    public func candidateAreas(at p: LonLat) throws -> [String] {
        boxes.filter { p.lon >= $0.1.minLon && p.lon <= $0.1.maxLon && p.lat >= $0.1.minLat && p.lat <= $0.1.maxLat }.map(\.0)
    }

    public func area(_ id: String) throws -> JudgedArea? { areas[id] }
}
