/// How a batch finds each fix's candidate areas: one decision, from the
/// number of fixes and the number of areas, made once before
/// any fix is judged (`Judgement.run`). Every strategy gives the same
/// candidates for a fix, so the same output; they differ in what is read and
/// prepared, and when.
///
/// | strategy | when | what is read and prepared | file |
/// |---|---|---|---|
/// | `prepareAll` | fixes ≥ areas, areas ≤ `maxPreparedAreas` | every area at once (on its own thread while the fixes are read, if their number is known ahead), the grid and its masks; judged through a `CandidatePlan` | AreaPreparation.swift, CandidatePlan.swift |
/// | `onDemand` | 30 × fixes ≥ areas | every box into the grid; before each chunk, the areas its fixes and its subjects' stays reach; judged through a plan | OnDemandCatalog.swift |
/// | `rtreePerFix` | fewer fixes | an R*Tree query per fix; each area read when first met | SQLCatalog.swift |
///
/// `--explain` takes the same strategies: its reasons are worked out from
/// the plan's areas when a verdict that did not count is replayed, and its
/// plans keep the candidates the masks show outside (CandidatePlan.swift).
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
    case prepareAll, onDemand, rtreePerFix

    /// Whether `fixes` fixes meet most of `areas` areas, and all fit in memory.
    static func meetsMost(fixes: Int, areas: Int, maxPreparedAreas: Int) -> Bool {
        fixes >= areas && areas <= maxPreparedAreas
    }

    /// The strategy for `fixes` valid fixes; `preparedEarly` when every area
    /// is already being prepared (the batch's expected size met most areas).
    static func choose(fixes: Int, areas: Int, maxPreparedAreas: Int, preparedEarly: Bool) -> CandidateStrategy {
        if preparedEarly || meetsMost(fixes: fixes, areas: areas, maxPreparedAreas: maxPreparedAreas) { return .prepareAll }
        return fixes > 0 && fixes * 30 >= areas ? .onDemand : .rtreePerFix
    }

    /// Whether chunks are judged through a `CandidatePlan`.
    var plans: Bool { self != .rtreePerFix }
}
