import GeofenceCore

/// A judging thread's view of the shared catalog: areas it has seen are kept
/// in its own dictionary, so threads meet at the shared (locked) catalog only
/// for an area's first use.
final class WorkerCatalog: JudgeCatalog {
    let shared: SQLCatalog
    private var areas: [String: JudgedArea?] = [:]
    init(_ shared: SQLCatalog) { self.shared = shared }
    func candidateAreas(at p: LonLat) throws -> [String] { try shared.candidateAreas(at: p) }
    func forget() { areas.removeAll() }
    func area(_ id: String) throws -> JudgedArea? {
        if let a = areas[id] { return a }
        let a = try shared.area(id)
        areas[id] = a
        return a
    }
}
