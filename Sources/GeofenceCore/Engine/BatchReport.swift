/// What a batch did, for its summary and its run record.
public struct BatchReport: Sendable {
    /// Rows read, valid or not.
    public var fixes = 0
    public var counters = JudgeCounters()
    /// Why the batch's first invalid fix was refused (`row N: …`), for a
    /// summary: a file whose every fix is invalid (times without an
    /// offset, say) must not look like a quiet day.
    public var firstInvalid: String?
    /// Invalid fixes whose time reads as epoch milliseconds
    /// (`Timestamp.looksLikeEpochMilliseconds`) or lacks only an offset:
    /// when they are every invalid fix, a summary names the cure.
    public var millisecondTimes = 0, offsetlessTimes = 0
    /// Valid fixes whose time had no offset and was read as local time in the catalog's zone.
    public var localTimes = 0
    /// Valid fixes of a feed in epoch milliseconds (`FixFeed.timeUnit`)
    /// whose time falls before `earlyMillisecondsBelow`, where a Unix time
    /// in seconds read as milliseconds lands: judged as given, and named by
    /// the summary, since a feed mixing both units stores 1970 without a word.
    public var earlyMillisecondTimes = 0
    /// 1973-03-03T09:46:40Z: 10^11 milliseconds, ten times any 10-digit Unix time in seconds.
    public static let earlyMillisecondsBelow = Timestamp(microseconds: 100_000_000_000_000)
    /// Invalid fixes for having no accuracy at all.
    public var missingAccuracies = 0

    public init() {}
}

/// How a batch is cut and how much it keeps in memory. The defaults suit a
/// machine of a few GiB; tests shrink them to reach every path with few fixes.
public struct BatchSettings: Sendable {
    /// Prepared areas kept at most (about 1–2 KB each): a busy region stays
    /// warm, a million-fence catalog stays well under 2 GiB. A catalog with
    /// more areas is prepared as the batch reaches it (`OnDemandPreparation`),
    /// keeping at most this many between chunks (a chunk holds all it
    /// needs while it is judged); judged without a plan, it is checked by
    /// each judging thread before each fix.
    public var maxPreparedAreas = 200_000

    /// Fixes held in memory between reading states and storing results.
    /// Enough for tens of subjects even at 10,000 fixes each, so that the
    /// threads stay busy until a chunk's last few subjects.
    public var chunkFixes = 200_000

    /// The same, when judging with a `CandidatePlan` (~100 bytes a fix): a
    /// plan reads fewer areas cold the more fixes it holds per grid cell.
    public var plannedChunkFixes = 1_000_000

    /// A planned chunk of at least this many fixes is planned in waves
    /// (`PlanWaves`), so that its writes start after the first wave's plan.
    public var planWaveFixes = 100_000

    /// The same, when the chunk's areas are prepared before it is judged
    /// (`OnDemandPreparation`): the areas one chunk needs are held at once.
    public var onDemandChunkFixes = 250_000

    /// A batch of up to this many valid fixes is ordered in memory (~50 bytes
    /// a fix); a larger one goes to the `FixSpill`, if the doors have one.
    public var inMemoryFixes = 2_000_000

    public init() {}

    /// The chunk size for a strategy.
    func chunkLimit(_ strategy: CandidateStrategy) -> Int {
        switch strategy {
        case .prepareAll: plannedChunkFixes
        case .onDemand: onDemandChunkFixes
        case .rtreePerFix, .windows: chunkFixes
        }
    }
}
