/// The doors of the batch engine: the few things `BatchEngine` asks of the
/// place it runs in. The SQL layer implements each over a geofence
/// database (SQLCatalog, StateStore, RunOutput, SpilledFixes); a Spark task
/// or a threshold sweep implements them over what it holds (a read-only
/// catalog, state records in Arrow batches, an Arrow writer).
///
///     let doors = BatchDoors(areas: catalog, states: store, sink: output, spill: nil)
///     let engine = BatchEngine(doors, explain: false)
///     let report = try engine.run(rows, expectedFixes: nil)   // judged chunk by chunk, handed over in order
///
/// | door | what the engine asks of it | when |
/// |---|---|---|
/// | `AreaSource` | the areas that may contain a point, each area prepared; every area at once, or those a chunk reaches | before each chunk (`CandidateStrategy`), and by the judging threads on an area's first use |
/// | `SubjectStateStore` | one `SubjectState` record per subject, loaded before its fixes are judged and saved after | per chunk, subject by subject |
/// | `RunSink` | where notifications and explanations go, in canonical order | as each subject is judged |
/// | `FixSpill` | ordering a batch too large for memory | only past `BatchSettings.inMemoryFixes` |
///
/// How the engine uses them, and the rule that keeps it simple: every door
/// is called from the thread that called `run`, except that the judging
/// threads ask the `AreaSource` for an area met the first time (under its
/// `lock`). While they judge, the calling thread holds that lock for each
/// hand-over (`save`, `store`); before and after, no judging thread runs.
/// So a door built over one database connection uses it one thread at a time.

/// Where areas come from: the catalog, read-only for the engine.
/// `JudgeCatalog` answers per point; the rest lets a batch read and prepare
/// the areas in bulk before judging, as its `CandidateStrategy` says.
public protocol AreaSource: JudgeCatalog {
    /// Held by the engine around each hand-over while the judging threads
    /// run, and by the source itself around its own reads.
    var lock: Lock { get }
    /// How many areas the catalog holds (what the strategy is chosen by).
    var areaCount: Int { get throws }
    /// The index in memory, once every area or every box was read
    /// (`prepareAllAreas`, `openOnDemand`); nil until then.
    var grid: CandidateGrid? { get }
    /// Every area by grid index, once `prepareAllAreas` prepared them all.
    var plannedAreas: PlannedAreas? { get }
    /// Drops the prepared areas if more than `limit` are held; returns a
    /// generation number that changes whenever areas were dropped, so that
    /// the judging threads' caches (`WorkerCatalog`) let go of theirs.
    func boundAreas(to limit: Int) -> Int
    /// Prepares every area, with the grid and its masks.
    func prepareAllAreas() throws
    /// Starts `prepareAllAreas` on a thread of its own, for a batch known to
    /// meet most areas, while its fixes are still being read.
    func startPreparingAll() -> AllAreasPreparation
    /// Reads every box into a grid and returns the areas to be prepared as
    /// each chunk reaches them (`CandidateStrategy.onDemand`).
    func openOnDemand() throws -> OnDemandPreparation
    /// How a single fix finds its candidates (`CandidateStrategy.forOneFix`).
    var perFixStrategy: CandidateStrategy { get set }
    /// Empties the source of what it prepared and returns it
    /// (`BatchEngine.leaveAreasToExit`).
    func takeAreas() -> Any
    /// True for a source whose every area is prepared already and kept
    /// across batches (a Spark task's catalog, prepared once per executor):
    /// every batch, however small, is then judged through the plan over
    /// them (`CandidateStrategy.prepareAll`), with nothing read again.
    var keepsEveryAreaPrepared: Bool { get }
}

extension AreaSource {
    /// A source prepares its areas for each batch unless it says otherwise.
    public var keepsEveryAreaPrepared: Bool { false }
}

/// Every area being prepared on a thread of its own (`AreaSource.startPreparingAll`).
public protocol AllAreasPreparation: AnyObject {
    /// Returns once the source has read the catalog (its connection is
    /// free for other work from then on).
    func waitUntilRead()
    /// The grid's cells, once made (nil if the preparation failed): enough
    /// to order a chunk's fixes for its plan while the areas are prepared.
    func cells() -> CandidateGrid?
    /// Waits for every area; throws what the preparation met.
    func finish() throws
}

/// The areas of a large catalog, prepared as a batch's chunks reach them.
public protocol OnDemandPreparation: AnyObject {
    /// The grid of every box, and the areas placed so far.
    var planned: PlannedAreas { get }
    /// Places every area the fixes' candidates and the subjects' stays
    /// reach, keeping at most `limit` placed (the chunk's own always).
    func prepare(reachedBy fixes: [Fix], stays: [SubjectState], limit: Int) throws
}

/// Where each subject's state comes from and goes: one record per subject
/// (`SubjectState`: its last judged fix and count, its stays with their
/// streaks and DWELL spent, its last-notified days).
public protocol SubjectStateStore: AnyObject {
    /// The subject's state; an empty one for a subject never judged.
    func load(_ subject: String) throws -> SubjectState
    /// Stores `state`; `before` is what `load` gave, so a store may write
    /// only what changed.
    func save(_ state: SubjectState, before: SubjectState) throws
}

/// Where a run's notifications and explanations go, in canonical order:
/// subject by subject, each subject's by time, area_id, condition_id.
public protocol RunSink: AnyObject {
    /// Called between rows while a batch is read, before anything is
    /// stored; throws to stop the run (an interruption the door was asked for).
    func checkStillWanted() throws
    /// Called once before the first subject's results of a batch of
    /// `validFixes` fixes (a sink may then defer an index to the end).
    func willStore(validFixes: Int) throws
    /// One subject's notifications, with what `encode` made of them (nil without one).
    func store(_ notifications: [Notification], encoded: [UInt8]?) throws
    func store(_ explanations: [Explanation]) throws
    /// Called once after the batch's last result.
    func finish() throws
    /// Run on a judging thread with one subject's notifications, so that
    /// encoding them for a file overlaps the judging; nil: none.
    var encode: (@Sendable ([Notification]) -> [UInt8]?)? { get }
}

/// A batch's valid fixes, held outside memory to be ordered
/// (`FixOrdering`, past `BatchSettings.inMemoryFixes`).
public protocol FixSpill: AnyObject {
    func add(_ fix: Fix) throws
    /// Every fix ordered by subject (its UTF-8 bytes), time and input order;
    /// `newSubject` is true at each subject's first fix.
    func forEachOrdered(_ body: (_ fix: Fix, _ newSubject: Bool) throws -> Void) throws
}

/// Opens a `FixSpill` when a batch outgrows memory.
public protocol FixSpillOpener: AnyObject {
    func openSpill() throws -> FixSpill
}

/// The doors one engine runs through.
public struct BatchDoors {
    public var areas: AreaSource
    public var states: SubjectStateStore
    public var sink: RunSink
    /// nil: every batch is ordered in memory, however large.
    public var spill: FixSpillOpener?

    public init(areas: AreaSource, states: SubjectStateStore, sink: RunSink, spill: FixSpillOpener? = nil) {
        self.areas = areas; self.states = states; self.sink = sink; self.spill = spill
    }
}
