import GeofenceCore

/// A read-only catalog prepared once and kept for many batches: the
/// `AreaSource` of a Spark task, whose executor keeps it between tasks.
///
/// Every area is read and prepared when it is made (`SQLCatalog.prepareAllAreas`:
/// one scan, the grid and its masks built on every core), so a batch, however
/// small, starts judging at once through the plan over them
/// (`keepsEveryAreaPrepared`), and nothing is read from the file again. The
/// prepared areas are never dropped (`boundAreas`) nor handed away
/// (`takeAreas`): they are the task's for its life. Everything else is the
/// wrapped `SQLCatalog`'s.
final class KeptCatalog: AreaSource {
    let inner: SQLCatalog
    let count: Int

    /// Reads and prepares every area of `catalog` now.
    init(_ catalog: SQLCatalog) throws {
        inner = catalog
        count = try catalog.areaCount
        if count > 0 { try catalog.prepareAllAreas() }
    }

    var lock: Lock { inner.lock }
    var areaCount: Int { count }
    var grid: CandidateGrid? { inner.grid }
    var plannedAreas: PlannedAreas? { inner.plannedAreas }
    var keepsEveryAreaPrepared: Bool { count > 0 }
    var perFixStrategy: CandidateStrategy {
        get { inner.perFixStrategy }
        set { inner.perFixStrategy = newValue }
    }

    /// Nothing is dropped: every area stays prepared (the generation never changes).
    func boundAreas(to limit: Int) -> Int { 0 }
    /// Prepared when the catalog was kept: nothing to do.
    func prepareAllAreas() throws {}
    func startPreparingAll() -> AllAreasPreparation { Ready(inner.grid) }
    func openOnDemand() throws -> OnDemandPreparation { try inner.openOnDemand() }
    /// The areas stay with the task: nothing is handed away.
    func takeAreas() -> Any { () }

    func candidateAreas(at p: LonLat) throws -> [String] { try inner.candidateAreas(at: p) }
    func area(_ id: String) throws -> JudgedArea? { try inner.area(id) }
    func forEachCandidate(at p: LonLat, _ body: (_ id: String, _ area: JudgedArea?, _ hint: CandidateHint) throws -> Void) throws {
        try inner.forEachCandidate(at: p, body)
    }
    func withArea<R>(_ id: String, _ body: (JudgedArea?) throws -> R) throws -> R { try inner.withArea(id, body) }

    /// A preparation that finished before it was asked for.
    private final class Ready: AllAreasPreparation {
        let grid: CandidateGrid?
        init(_ grid: CandidateGrid?) { self.grid = grid }
        func waitUntilRead() {}
        func cells() -> CandidateGrid? { grid }
        func finish() throws {}
    }
}
