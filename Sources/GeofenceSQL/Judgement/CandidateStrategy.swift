/// How a batch finds each fix's candidate areas: one decision, from the
/// number of fixes, the number of areas and `--explain`, made once before
/// any fix is judged (`Judgement.run`). Every strategy gives the same
/// candidates for a fix, so the same output; they differ in what is read and
/// prepared, and when.
///
/// | strategy | when | what is read and prepared | file |
/// |---|---|---|---|
/// | `prepareAll` | fixes ≥ areas, areas ≤ `maxPreparedAreas` | every area at once (on its own thread while the fixes are read, if their number is known ahead), the grid and its masks; judged through a `CandidatePlan` (fix by fix with `--explain`) | AreaPreparation.swift, CandidatePlan.swift |
/// | `onDemand` | 30 × fixes ≥ areas, no `--explain` | every box into the grid; before each chunk, the areas its fixes and its subjects' stays reach; judged through a plan | OnDemandCatalog.swift |
/// | `indexInMemory` | 30 × fixes ≥ areas, `--explain` | every box into the grid; each area read and prepared when a fix first meets it | SQLCatalog.swift (`loadIndexIntoMemory`), WorkerCatalog.swift |
/// | `rtreePerFix` | fewer fixes | an R*Tree query per fix; each area read when first met | SQLCatalog.swift |
///
/// gf_check, one fix a call, uses windows of the R*Tree around recent fixes
/// (`CandidateWindows`), and the whole index once its misses repay it
/// (`SQLCatalog.readIndexOnceMissesRepay`).
///
/// Why these thresholds: a fix meets tens of candidate areas, so with as
/// many fixes as areas nearly every area is met and preparing all at once
/// (on every core, in one scan) is cheapest; one R*Tree query costs about
/// as much as reading thirty boxes, so past one fix per thirty areas the
/// whole index is read once.
enum CandidateStrategy: Equatable {
    case prepareAll, onDemand, indexInMemory, rtreePerFix

    /// Whether `fixes` fixes meet most of `areas` areas, and all fit in memory.
    static func meetsMost(fixes: Int, areas: Int, maxPreparedAreas: Int) -> Bool {
        fixes >= areas && areas <= maxPreparedAreas
    }

    /// The strategy for `fixes` valid fixes; `preparedEarly` when every area
    /// is already being prepared (the batch's expected size met most areas).
    static func choose(fixes: Int, areas: Int, explain: Bool, maxPreparedAreas: Int, preparedEarly: Bool) -> CandidateStrategy {
        if preparedEarly || meetsMost(fixes: fixes, areas: areas, maxPreparedAreas: maxPreparedAreas) { return .prepareAll }
        guard fixes * 30 >= areas else { return .rtreePerFix }
        return explain || fixes == 0 ? .indexInMemory : .onDemand
    }

    /// Whether chunks are judged through a `CandidatePlan` (a plan keeps no
    /// reasons, so not with `--explain`).
    func plans(explain: Bool) -> Bool { !explain && (self == .prepareAll || self == .onDemand) }
}
