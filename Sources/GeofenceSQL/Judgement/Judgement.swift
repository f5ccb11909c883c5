// Longer than 300 lines: the batch run (staging, chunks, the judging threads and the writes that overlap them) and the single check share one catalog, state store and writer; the stages themselves are SubjectJudge's, the candidate path CandidateStrategy's.
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
        public var fixes = 0
        public var counters = JudgeCounters()
    }

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
        var report = Report(runId: try startRun(kind: "judge", source: source))
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
            if let e = row.readError { throw e }
            report.fixes += 1
            if let f = row.validFix {
                try staging.add(f)
            } else if case .failure(let why) = row.validated {
                judge.reject(subjectId: row.subjectId ?? "", ts: row.time, InvalidFix("row \(report.fixes): \(why.reason)"))
            }
        }
        let valid = report.fixes - judge.counters.invalid
        let strategy = CandidateStrategy.choose(fixes: valid, areas: areaCount, explain: explain, maxPreparedAreas: maxPreparedAreas,
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
            case .indexInMemory: try catalog.loadIndexIntoMemory()
            case .rtreePerFix: break
            }
        }
        // A plan reads fewer areas cold the more fixes it holds per grid cell.
        let chunkLimit = !strategy.plans(explain: explain) ? chunkFixes : strategy == .onDemand ? onDemandChunkFixes : plannedChunkFixes
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
            let cellOrder = explain ? nil : early?.cells().map { cells in
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

    /// One per judging thread, kept across chunks.
    private var workerCatalogs: [WorkerCatalog] = []

    /// The areas of a batch prepared as its chunks reach them, if it is judged so.
    private var onDemand: OnDemandCatalog?

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

    struct SubjectResult {
        var notifications: [Notification] = []
        var counters = JudgeCounters()
        var explanations: [Explanation] = []
        var error: Error?
    }

    /// Judges each subject's fixes against its state, subjects spread over the
    /// cores. Each thread owns distinct indices of `states` and of the results.
    /// `cellOrder`, when given, is `CandidatePlan.cellOrder` of `fixes`.
    ///
    /// The calling thread meanwhile hands each subject's result, in subject
    /// order, to `consume` (with the states) as soon as that subject is
    /// judged, so SQLite's writes overlap the judging. It holds the catalog's
    /// lock while it does: the judging threads use the connection only under
    /// that lock (an area met for the first time), and one connection is one
    /// thread at a time.
    private func judgeInParallel(_ fixes: [Fix], _ subjects: [Range<Int>], _ states: inout [SubjectState], cellOrder: [Int]? = nil,
                                 consume: (Int, SubjectResult, UnsafeMutableBufferPointer<SubjectState>) throws -> Void) throws {
        var results = [SubjectResult](repeating: SubjectResult(), count: subjects.count)
        let width = subjects.count > 1 ? min(Parallel.width, subjects.count) : 1
        while workerCatalogs.count < width { workerCatalogs.append(WorkerCatalog(catalog)) }
        for c in workerCatalogs { c.limit = maxPreparedAreas; c.skippingOutside = !explain }
        let catalogs = workerCatalogs, explain = self.explain, filter = self.fixFilter, lock = catalog.lock
        let planned = explain ? nil : onDemand?.planned ?? catalog.plannedAreas
        let plan = planned.map { self.plan(fixes, $0, cellOrder: cellOrder) } ?? Plan(entries: [], spans: [])
        // Subject order, as they are written; but a subject that holds a
        // large share of the chunk first, or the chunk would end with one
        // thread judging it while the others wait.
        let total = fixes.count
        let heavy = subjects.indices.filter { subjects[$0].count * 8 * width >= total }
        let order = heavy.sorted { subjects[$0].count > subjects[$1].count }
            + subjects.indices.filter { subjects[$0].count * 8 * width < total }
        var failure: Error?
        plan.withBuffers { shares, spans in
            fixes.withUnsafeBufferPointer { fixes in
                states.withUnsafeMutableBufferPointer { st in
                    results.withUnsafeMutableBufferPointer { out in
                        let (stBox, out, fixes) = (UnsafeMutableBufferPointerBox(st), UnsafeMutableBufferPointerBox(out), UnsafeBufferPointerBox(fixes))
                        do {
                            try Parallel.share(order, width: width, consumingInOrder: { i in
                                let r = out.buffer[i]
                                out.buffer[i] = SubjectResult()  // its memory goes as soon as it is written
                                try lock.with { try consume(i, r, stBox.buffer) }
                            }) { w, i in
                                var judge = SubjectJudge(catalog: catalogs[w], explain: explain, fixFilter: filter)
                                var r = SubjectResult()
                                do {
                                    for k in subjects[i] {
                                        if let planned {
                                            let s = spans.buffer[k]
                                            let entries = UnsafeBufferPointer(rebasing: shares[Int(s.share)].buffer[Int(s.start)..<Int(s.end)])
                                            r.notifications += try judge.judge(fixes.buffer[k], &stBox.buffer[i], plan: SubjectJudge.PlannedFix(entries, planned))
                                        } else {
                                            r.notifications += try judge.judge(fixes.buffer[k], &stBox.buffer[i])
                                        }
                                    }
                                } catch {
                                    r.error = error
                                }
                                r.counters = judge.counters
                                r.explanations = judge.explanations
                                out.buffer[i] = r
                            }
                        } catch {
                            failure = error
                        }
                    }
                }
            }
        }
        if let failure { throw failure }
    }

    /// A chunk's plan: per share of the cells, its entries; per fix, its span.
    private struct Plan {
        var entries: [[UInt32]]
        var spans: [CandidatePlan.Span]

        /// Calls `body` with every share's entries and the spans, as buffers
        /// the judging threads share (valid only during `body`).
        func withBuffers<R>(_ body: ([UnsafeBufferPointerBox<UInt32>], UnsafeBufferPointerBox<CandidatePlan.Span>) -> R) -> R {
            func nest(_ k: Int, _ held: [UnsafeBufferPointerBox<UInt32>]) -> R {
                guard k < entries.count else { return spans.withUnsafeBufferPointer { body(held, UnsafeBufferPointerBox($0)) } }
                return entries[k].withUnsafeBufferPointer { nest(k + 1, held + [UnsafeBufferPointerBox($0)]) }
            }
            return nest(0, [])
        }
    }

    /// Plans the chunk's candidates and verdicts cell by cell, in contiguous
    /// runs of cells that the cores take in turn.
    ///
    /// Why many runs, not one per core: a run's cost follows how many areas
    /// its cells hold, not how many fixes, so equal halves of the fixes
    /// would leave one core idle at the end of the plan.
    private func plan(_ fixes: [Fix], _ areas: PlannedAreas, cellOrder: [Int]?) -> Plan {
        let width = min(Parallel.width, max(1, fixes.count / 10_000))
        let runs = width == 1 ? 1 : width * 16
        var plan = Plan(entries: [[UInt32]](repeating: [], count: runs),
                        spans: [CandidatePlan.Span](repeating: CandidatePlan.Span(), count: fixes.count))
        fixes.withUnsafeBufferPointer { fixes in
            let order = cellOrder ?? CandidatePlan.cellOrder(fixes, areas.grid)
            let fixes = UnsafeBufferPointerBox(fixes)
            plan.spans.withUnsafeMutableBufferPointer { spans in
                plan.entries.withUnsafeMutableBufferPointer { entries in
                    let (spans, entries) = (UnsafeMutableBufferPointerBox(spans), UnsafeMutableBufferPointerBox(entries))
                    Parallel.share(Array(0..<runs), width: width) { _, r in
                        let share = order[(order.count * r / runs)..<(order.count * (r + 1) / runs)]
                        // Room for the most the share can hold, so appending never
                        // moves it: a dense centre's fixes have over 100 candidates
                        // each, a suburb's a few, and pages never written cost nothing.
                        entries.buffer[r].reserveCapacity(share.reduce(0) { $0 + areas.grid.candidateBound(at: fixes.buffer[$1].position) })
                        CandidatePlan.plan(fixes.buffer, share, share: r, areas: areas, into: &entries.buffer[r], spans: spans.buffer)
                    }
                }
            }
        }
        return plan
    }

    /// Judges one fix (checkLocation): returns its notifications. With
    /// `trustingLastSave` (gf_check's session, which drops this judgement as
    /// soon as anything else writes) the state saved by the previous check is
    /// reused when the database still shows its last fix.
    public func check(_ row: Row, recordRun: Bool = true, trustingLastSave: Bool = false) throws -> (Report, [Notification]) {
        var report = Report(runId: recordRun ? try startRun(kind: "check", source: nil) : 0)
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
