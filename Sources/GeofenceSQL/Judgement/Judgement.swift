import GeofenceCore

/// One judgement run over fixes (behaviour §2, §4, §5): the batch behind
/// `geofence judge`, the single fix behind `geofence check` and gf_check().
///
/// Fixes are staged with their parsed times, then read back ordered by
/// subject, time and input order (`FixStaging`: in memory, or for a large
/// batch sorted by SQLite, so a batch need not fit in memory), and judged
/// subject by subject: load the subject's state, apply its
/// fixes, save it. Notifications are written in canonical order, so their ids
/// order them by subject, time, area_id, condition_id. The caller owns the
/// transaction: a failed run leaves nothing behind.
public final class Judgement {
    /// A fix as read from a table or file, before validation (`FixRow`, in the core).
    public typealias Row = FixRow

    public struct Report {
        public var runId: Int64
        /// The largest notification id before the run (0 for none): every
        /// row the run writes has a larger one, so a listing of the run can
        /// read that range instead of the whole table.
        public var notificationsAfter: Int64 = 0
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
        /// Invalid fixes for having no accuracy at all.
        public var missingAccuracies = 0
    }

    /// How the rows' source names its columns: invalid fixes are described
    /// in its terms (`FixFeed.describe`). The readers apply the rest of it.
    public var feed = FixFeed.standard

    let db: Connection
    let catalog: SQLCatalog
    let state: StateStore
    let explain: Bool
    let fixFilter: FixFilter?
    private let output: RunOutput

    /// With `fixFilter`, a batch drops the fixes a device with those positioning settings would not have reported.
    public init(_ db: Connection, explain: Bool = false, fixFilter: FixFilter? = nil) throws {
        self.db = db
        self.explain = explain
        self.fixFilter = fixFilter
        try Schema.requireCurrent(db, for: "judgement")
        catalog = try SQLCatalog(db)
        state = try StateStore(db)
        output = try RunOutput(db)
    }

    func startRun(kind: String, source: String?) throws -> Int64 {
        try db.query("INSERT INTO gf_runs (kind, source, started_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                     [.text(kind), source.sqlValue])
        return try db.scalar("SELECT last_insert_rowid()").int64 ?? 0
    }

    /// Read inside the run's transaction: no other writer can insert before its rows.
    func lastNotificationId() throws -> Int64 {
        try db.scalar("SELECT coalesce(max(id), 0) FROM gf_notifications").int64 ?? 0
    }

    func finishRun(_ r: Report) throws {
        let c = r.counters
        try db.query("""
            UPDATE gf_runs SET fixes = ?, judged = ?, stale = ?, invalid = ?, transitions = ?, notifications = ?, filtered = ?,
                               dropped_accuracy = ?, dropped_distance = ?
            WHERE run_id = ?
            """, [.integer(Int64(r.fixes)), .integer(Int64(c.judged)), .integer(Int64(c.stale)), .integer(Int64(c.invalid)),
                  .integer(Int64(c.transitions)), .integer(Int64(c.notifications)), .integer(Int64(c.filtered)),
                  .integer(Int64(c.droppedAccuracy)), .integer(Int64(c.droppedDistance)), .integer(r.runId)])
    }

    /// Judges a batch. `progress` gets (fixes judged, fixes in the batch).
    /// `expectedFixes`, a guess at the batch's size when `rows` cannot tell
    /// (a file being read), lets a large batch prepare the catalog while its
    /// fixes are read.
    public func run(_ rows: some Sequence<Row>, source: String?, expectedFixes: Int? = nil,
                    progress: ((Int, Int) -> Void)? = nil) throws -> Report {
        var report = Report(runId: try startRun(kind: "judge", source: source), notificationsAfter: try lastNotificationId())
        var judge = SubjectJudge(catalog: catalog, explain: explain, fixFilter: fixFilter)
        // Counted through SQLite's cache: mapped, the count's pages stayed
        // resident (`Connection.unmapped`).
        let areaCount = try db.unmapped { try catalog.areaCount }
        // Prepared while the fixes are read when their number is known ahead (`CandidateStrategy`).
        let early = CandidateStrategy.meetsMost(fixes: max(expectedFixes ?? 0, rows.underestimatedCount), areas: areaCount,
                                                maxPreparedAreas: maxPreparedAreas) && areaCount > 0 ? AreaPreparation(catalog) : nil
        // Room for three times the guess (which errs low): untouched room
        // costs no memory, while growing copied every fix into fresh pages.
        let staging = FixStaging(db, inMemoryLimit: inMemoryFixes, expected: max(rows.underestimatedCount, 3 * (expectedFixes ?? 0)))
        staging.beforeSQLite = { early?.waitUntilScanned() }
        for row in rows {
            // This phase runs no statement, which is where a requested rollback is
            // otherwise noticed: a signal must not wait for the whole file.
            if Interruption.isRequested { throw Interruption.error(nil) }
            if let e = row.readError { throw e }
            report.fixes += 1
            if let f = row.validFix {
                if row.readAsLocalTime { report.localTimes += 1 }
                try staging.add(f)
            } else if case .failure(let why) = row.validated {
                let invalid = InvalidFix("row \(report.fixes): \(feed.describe(why))", field: why.field)
                if report.firstInvalid == nil { report.firstInvalid = invalid.reason }
                if why.field == .accuracy && row.accuracy == nil && row.problem == nil { report.missingAccuracies += 1 }
                if why.field == .ts, let ts = row.ts {
                    if Timestamp.looksLikeEpochMilliseconds(ts) { report.millisecondTimes += 1 }
                    else if Timestamp.lacksOnlyOffset(ts) { report.offsetlessTimes += 1 }
                }
                judge.reject(subjectId: row.subjectId ?? "", ts: row.time, at: row.readablePosition, invalid)
            }
        }
        let valid = report.fixes - judge.counters.invalid
        let strategy = CandidateStrategy.choose(fixes: valid, areas: areaCount, maxPreparedAreas: maxPreparedAreas,
                                                preparedEarly: early != nil)
        onDemand = nil
        // Waited for only when the first chunk is judged: until then this
        // thread orders the fixes while the preparation's threads work.
        var prepared = false
        func prepare() throws {
            guard !prepared else { return }
            prepared = true
            switch strategy {
            case .prepareAll: if let early { try early.finish() } else { try catalog.prepareAllAreas() }
            case .onDemand: onDemand = try OnDemandCatalog(catalog)
            case .rtreePerFix: break
            }
        }
        // A plan reads fewer areas cold the more fixes it holds per grid cell.
        let chunkLimit = !strategy.plans ? chunkFixes : strategy == .onDemand ? onDemandChunkFixes : plannedChunkFixes
        var counters = judge.counters
        // The invalid rows' explanations come first, as the rows came; each
        // subject's follow with its notifications.
        var explanations: [Explanation]? = judge.explanations
        var indexChecked = false
        var deferredIndex: DeferredIndex?
        func writeRunExplanations() throws {
            try output.write(explanations ?? [], run: report.runId)
            explanations = nil
        }
        // The chunk's fixes, subject after subject, and each subject's run of them.
        var fixes: [Fix] = []
        var subjects: [(id: String, fixes: Range<Int>)] = []
        var done = 0
        // Subjects share nothing (behaviour §4), so a chunk of them is judged on every
        // core; SQLite reads and writes stay on this thread, in subject order.
        func flush() throws {
            guard !subjects.isEmpty else { return }
            // While the areas are still being prepared, on the cores' other
            // work: the fixes' order for a plan needs only the grid's cells.
            let cellOrder = early?.cells().map { cells in
                fixes.withUnsafeBufferPointer { CandidatePlan.cellOrder($0, cells) }
            }
            try prepare()
            try writeRunExplanations()
            if !indexChecked {
                indexChecked = true
                if valid >= deferIndexFixes { deferredIndex = try DeferredIndex.dropIfUnseen(db) }
            }
            var states = try subjects.map { try state.load($0.id, trustingLastSave: false) }
            try onDemand?.prepare(reachedBy: fixes, stays: states, limit: maxPreparedAreas)
            let before = states
            // Each subject's state and rows are written as soon as it is
            // judged, in subject order, while the threads judge the next ones.
            try judgeInParallel(fixes, subjects.map(\.fixes), &states, cellOrder: cellOrder) { i, r, states in
                if let error = r.error { throw error }
                try state.save(states[i], before: before[i])
                try output.write(r.notifications, run: report.runId)
                try notificationTap?.write(r.notifications, r.encoded)
                try output.write(r.explanations, run: report.runId)
                counters.add(r.counters)
            }
            done += fixes.count
            progress?(done, valid)
            fixes.removeAll(keepingCapacity: true)
            subjects.removeAll(keepingCapacity: true)
        }
        // A batch that is one chunk takes the staged fixes, reordered where they are.
        if valid <= chunkLimit, let taken = staging.takeOrdered() {
            (fixes, subjects) = (taken.fixes, taken.subjects)
        } else {
            fixes.reserveCapacity(min(valid, chunkLimit))
            try staging.forEachOrdered { fix, newSubject in
                if newSubject {
                    if fixes.count >= chunkLimit { try flush() }
                    subjects.append((fix.subjectId, fixes.count..<(fixes.count + 1)))
                } else {
                    subjects[subjects.count - 1].fixes = subjects[subjects.count - 1].fixes.lowerBound..<(fixes.count + 1)
                }
                fixes.append(fix)
            }
        }
        try flush()
        try prepare()  // a batch with no valid fix still waits for its preparation
        progress?(valid, valid)
        report.counters = counters
        try writeRunExplanations()
        try deferredIndex?.restore()
        try finishRun(report)
        return report
    }

    /// A batch's notifications handed on as they are stored (`NotificationTap`).
    public var notificationTap: NotificationTap?

    /// One per judging thread, kept across chunks.
    var workerCatalogs: [WorkerCatalog] = []

    /// The areas of a batch prepared as its chunks reach them, if it is judged so.
    var onDemand: OnDemandCatalog?

    /// For a process that exits right after the run (the CLI): the prepared
    /// areas and the index are handed to `LeftToExit` instead of being freed
    /// when this judgement goes. Each area is a tree of small allocations;
    /// freeing a catalog of them one by one is a visible part of a batch,
    /// while an exiting process returns its memory at once. The
    /// SQLite statements are still finalized as usual.
    public func leaveAreasToExit() {
        LeftToExit.keep(catalog.takeAreas())
        for c in workerCatalogs { LeftToExit.keep(c.takeAreas()) }
        if let onDemand { LeftToExit.keep(onDemand); self.onDemand = nil }
    }

    /// Prepared areas kept at most (about 1–2 KB each): a busy region stays
    /// warm, a million-fence catalog stays well under 2 GiB. A catalog with
    /// more areas is prepared as the batch reaches it (`OnDemandCatalog`),
    /// keeping at most this many between chunks (a chunk holds all it
    /// needs while it is judged); judged without a plan (`--explain`), it is
    /// checked by each judging thread before each fix.
    public var maxPreparedAreas = 200_000

    /// Fixes held in memory between SQLite's reads and writes. Enough for
    /// tens of subjects even at 10,000 fixes each, so that the threads stay
    /// busy until a chunk's last few subjects (with two, a thread that drew
    /// a quiet suburb waited for the other).
    public var chunkFixes = 200_000

    /// The same, when judging with a `CandidatePlan` (~100 bytes a fix).
    public var plannedChunkFixes = 1_000_000

    /// The same, when the chunk's areas are prepared before it is judged
    /// (`OnDemandCatalog`): the areas one chunk needs are held at once.
    public var onDemandChunkFixes = 250_000

    /// A batch of at least this many valid fixes into an empty
    /// gf_notifications builds its index at the end (`DeferredIndex`).
    public var deferIndexFixes = 10_000

    /// A batch of up to this many valid fixes is ordered in memory (~50 bytes
    /// a fix); a larger one spills to a temporary table that SQLite sorts.
    public var inMemoryFixes = 2_000_000

    /// Judges one fix (checkLocation): returns its notifications. With
    /// `trustingLastSave` (gf_check's session, which drops this judgement as
    /// soon as anything else writes) the state saved by the previous check is
    /// reused when the database still shows its last fix.
    public func check(_ row: Row, recordRun: Bool = true, trustingLastSave: Bool = false) throws -> (Report, [Notification]) {
        var report = Report(runId: recordRun ? try startRun(kind: "check", source: nil) : 0,
                            notificationsAfter: recordRun ? try lastNotificationId() : 0)
        report.fixes = 1
        var judge = SubjectJudge(catalog: catalog, explain: explain)
        var out: [Notification] = []
        switch row.validated {
        case .failure(let why):
            throw InputError("invalid fix: \(why.reason)")
        case .success(let fix):
            var subject = try state.load(fix.subjectId, trustingLastSave: trustingLastSave)
            let before = subject
            out = try judge.judge(fix, &subject)
            try state.save(subject, before: before)
            try output.write(out, run: report.runId)
        }
        report.counters = judge.counters
        try output.write(judge.explanations, run: report.runId)
        if recordRun { try finishRun(report) }
        return (report, out)
    }

}

/// What a process about to exit keeps instead of freeing
/// (`Judgement.leaveAreasToExit`). Never emptied.
enum LeftToExit {
    private static let lock = Lock()
    nonisolated(unsafe) private static var kept: [Any] = []
    static func keep(_ x: Any) { lock.with { kept.append(x) } }
}
