/// The batch engine: a batch of fixes judged against a catalog, through the
/// doors of `BatchDoors` (behaviour §2, §4, §5). The same engine is behind
/// `geofence judge` (a batch), `geofence check` and gf_check (one fix), and
/// is what a Spark task or a sweep drives with doors of their own.
///
///     let engine = BatchEngine(BatchDoors(areas: catalog, states: store, sink: output), explain: false)
///     let report = try engine.run(rows, expectedFixes: 1_000_000)
///     let one = try engine.judgeOne(row, strategy: .windows)
///
/// How a batch goes (`BatchRun`, one per `run`):
/// 1. **read**: every row is validated; valid fixes go to `FixOrdering`,
///    invalid ones are counted (and explained) at once. A batch known to
///    meet most areas has them prepared meanwhile (`startPreparingAll`).
/// 2. **choose**: `CandidateStrategy.choose` from the valid fixes and the areas.
/// 3. **judge, chunk by chunk**: fixes come back ordered by subject, time
///    and input order and are cut into chunks of whole subjects; per chunk
///    the areas are prepared as the strategy says, each subject's state is
///    loaded, the subjects are judged on every core (ChunkJudging.swift),
///    and each subject's state and results are handed over in subject order
///    while the next ones are judged.
/// 4. **hand over**: the sink is told the batch is done.
///
/// Subjects share nothing (behaviour §4), which is what lets a chunk's
/// subjects be judged on every core, and a subject's fixes on any machine
/// that holds its state record.
public final class BatchEngine {
    public let doors: BatchDoors
    public let explain: Bool
    /// Drops fixes a device with these positioning settings would not have reported.
    public let fixFilter: FixFilter?
    public var settings = BatchSettings()
    /// How the rows' source names its columns: invalid fixes are described
    /// in its terms (`FixFeed.describe`).
    public var feed = FixFeed.standard
    /// Where a batch cut short goes on from (`ResumePoint`); nil: from its start.
    public var resume: ResumePoint?
    /// Called on the calling thread after each chunk's results were handed
    /// over (the last chunk's too), before the next chunk is judged: a caller
    /// that commits there can resume the batch from `resume` if it is cut short.
    public var afterChunk: ((ChunkDone) throws -> Void)?

    /// One per judging thread, kept across chunks.
    var workerCatalogs: [WorkerCatalog] = []
    /// The areas of a batch prepared as its chunks reach them, if it is judged so.
    var onDemand: OnDemandPreparation?
    /// gf_check's session (`.windows`) judges one fix a call against a catalog
    /// that outlives the calls: once the session reads the whole index, its
    /// candidates come by grid index through a cache of their own, as a
    /// judging thread's do, not by id through the shared catalog's lock and
    /// dictionary (a fix in a dense centre meets a hundred boxes).
    /// It masks each area when it meets it again (`MasksAsMet`) and leaves out
    /// candidates the masks show outside, as a judging thread does.
    private lazy var sessionCatalog: WorkerCatalog = {
        let c = WorkerCatalog(doors.areas)
        c.masksAreasAsMet = true
        c.skippingOutside = !explain
        return c
    }()

    public init(_ doors: BatchDoors, explain: Bool = false, fixFilter: FixFilter? = nil) {
        self.doors = doors; self.explain = explain; self.fixFilter = fixFilter
    }

    /// Judges a batch. `progress` gets (fixes judged, valid fixes in the
    /// batch). `expectedFixes`, a guess at the batch's size when `rows`
    /// cannot tell (a file being read), lets a large batch prepare the
    /// catalog while its fixes are read.
    public func run(_ rows: some Sequence<FixRow>, expectedFixes: Int? = nil,
                    progress: ((Int, Int) -> Void)? = nil) throws -> BatchReport {
        let run = try BatchRun(self, expectedFixes: expectedFixes ?? 0, known: rows.underestimatedCount, progress: progress)
        try run.read(rows)
        try run.judgeChunks()
        return try run.finish()
    }

    /// What one fix gave: its notifications and its counts (its reasons, with
    /// `explain`, went to the sink).
    public struct OneFix {
        public var notifications: [Notification] = []
        public var counters = JudgeCounters()
    }

    /// Judges one fix (checkLocation): loads its subject's state, judges the
    /// fix with candidates found as `strategy` says (`CandidateStrategy.forOneFix`),
    /// saves the state, and hands the notifications and explanations to the
    /// sink. An invalid fix is refused with an `InputError` and changes nothing.
    public func judgeOne(_ row: FixRow, strategy: CandidateStrategy) throws -> OneFix {
        let fix = try row.requireValid()
        doors.areas.perFixStrategy = strategy
        var judge = SubjectJudge(catalog: strategy == .windows ? sessionCatalog : doors.areas, explain: explain)
        var state = try doors.states.load(fix.subjectId)
        let before = state
        var one = OneFix()
        one.notifications = try judge.judge(fix, &state)
        try doors.states.save(state, before: before)
        try doors.sink.store(one.notifications, encoded: nil)
        try doors.sink.store(judge.explanations)
        one.counters = judge.counters
        return one
    }

    /// For a process that exits right after the run (the CLI): the prepared
    /// areas and the index are handed to `LeftToExit` instead of being freed
    /// when the engine goes. Each area is a tree of small allocations;
    /// freeing a catalog of them one by one is a visible part of a batch,
    /// while an exiting process returns its memory at once.
    public func leaveAreasToExit() {
        LeftToExit.keep(doors.areas.takeAreas())
        for c in workerCatalogs { LeftToExit.keep(c.takeAreas()) }
        if let onDemand { LeftToExit.keep(onDemand); self.onDemand = nil }
    }
}

/// What a process about to exit keeps instead of freeing
/// (`BatchEngine.leaveAreasToExit`). Never emptied.
public enum LeftToExit {
    private static let lock = Lock()
    nonisolated(unsafe) private static var kept: [Any] = []
    public static func keep(_ x: Any) { lock.with { kept.append(x) } }
}
