/// How fixes find their candidate areas: one decision, from the number of
/// fixes and the number of areas, made once before any fix is judged
/// (`BatchEngine.run`, and `BatchEngine.judgeOne` for a single fix). Every
/// strategy gives the same candidates for a fix, so the same output; they
/// differ in what is read and prepared, and when.
///
/// | strategy | when | what is read and prepared | file |
/// |---|---|---|---|
/// | `prepareAll` | fixes ≥ areas, areas ≤ `maxPreparedAreas` | every area at once (on its own thread while the fixes are read, if their number is known ahead), the grid and its masks; judged through a `CandidatePlan` | AreaPreparation.swift, CandidatePlan.swift |
/// | `onDemand` | 30 × fixes ≥ areas | every box into the grid; before each chunk, the areas its fixes and its subjects' stays reach; judged through a plan | OnDemandCatalog.swift |
/// | `rtreePerFix` | fewer fixes; a single fix (`geofence check`) | an R*Tree query per fix; each area read when first met | SQLCatalog.swift |
/// | `windows` | one fix a call, many calls (gf_check's session) | a window of the R*Tree around recent fixes per miss (`CandidateWindows`); the whole index once the misses repay it (`readsWholeIndex`) | SQLCatalog.swift, CandidateWindows.swift |
///
/// `--explain` takes the same strategies: its reasons are worked out from
/// the plan's areas when a verdict that did not count is replayed, and its
/// plans keep the candidates the masks show outside (CandidatePlan.swift).
///
/// Why these thresholds: a fix meets tens of candidate areas, so with as
/// many fixes as areas nearly every area is met and preparing all at once
/// (on every core, in one scan) is cheapest; one R*Tree query costs about
/// as much as reading thirty boxes, so past one fix per thirty areas the
/// whole index is read once.
public enum CandidateStrategy: Equatable, Sendable {
    case prepareAll, onDemand, rtreePerFix, windows

    /// Whether `fixes` fixes meet most of `areas` areas, and all fit in memory.
    public static func meetsMost(fixes: Int, areas: Int, maxPreparedAreas: Int) -> Bool {
        fixes >= areas && areas <= maxPreparedAreas
    }

    /// The strategy for `fixes` valid fixes; `preparedEarly` when every area
    /// is already being prepared (the batch's expected size met most areas).
    public static func choose(fixes: Int, areas: Int, maxPreparedAreas: Int, preparedEarly: Bool) -> CandidateStrategy {
        if preparedEarly || meetsMost(fixes: fixes, areas: areas, maxPreparedAreas: maxPreparedAreas) { return .prepareAll }
        return fixes > 0 && fixes * 30 >= areas ? .onDemand : .rtreePerFix
    }

    /// The strategy for one fix: `windows` in a session that lives across
    /// many calls, where recent fixes' windows repay; else one query.
    public static func forOneFix(inSession: Bool) -> CandidateStrategy { inSession ? .windows : .rtreePerFix }

    /// Whether a session's windows (`windows`) should give way to the whole
    /// index in memory: a miss reads a window (hundreds of boxes in a dense
    /// city), reading every box costs about as much as a few dozen misses,
    /// so it pays once the misses reach a fiftieth of the areas. Asked every
    /// 64th miss, so the count of areas is read rarely.
    public static func readsWholeIndex(misses: Int, areas: () throws -> Int) rethrows -> Bool {
        guard misses > 0, misses % 64 == 0 else { return false }
        return try misses * 50 >= areas()
    }

    /// Whether chunks are judged through a `CandidatePlan`.
    public var plans: Bool { self == .prepareAll || self == .onDemand }
}
