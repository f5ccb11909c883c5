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
/// | `windows` | one fix a call, many calls (gf_check's session) | a window of the R*Tree around recent fixes per miss (`CandidateWindows`); the whole index once the windows have cost a third of reading it (`readsWholeIndex`), each area masked when met again (`MasksAsMet`) | SQLCatalog.swift, CandidateWindows.swift |
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
    /// index in memory, given what they have cost so far: `misses` index
    /// queries, which read `boxesRead` boxes. A box read through a window
    /// costs about what a box of the whole index costs to read, and a query
    /// about four boxes besides the boxes it returns (docs/write-path.md); so
    /// the windows have cost `boxesRead + 4 × misses` boxes, and the whole
    /// index is read once that reaches a third of the areas. A session that
    /// goes on spends at most a third of the read again on windows first;
    /// one that misses less never reads it. Counted in boxes, not misses,
    /// because a miss costs what its window holds: a few boxes over a
    /// country, hundreds in a dense city. Asked every 64th miss, so the
    /// count of areas is read rarely.
    public static func readsWholeIndex(misses: Int, boxesRead: Int, areas: () throws -> Int) rethrows -> Bool {
        guard misses > 0, misses % 64 == 0 else { return false }
        return try (boxesRead + 4 * misses) * 3 >= areas()
    }

    /// Whether chunks are judged through a `CandidatePlan`.
    public var plans: Bool { self == .prepareAll || self == .onDemand }
}
