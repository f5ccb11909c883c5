/// A batch's judging threads (the rules they keep: Parallel.swift): the
/// subjects of a chunk judged on every core while the calling thread writes
/// each subject's result as soon as it is judged, and the chunk's plan
/// worked out cell by cell on every core first.
extension BatchEngine {
    struct SubjectResult {
        var notifications: [Notification] = []
        var counters = JudgeCounters()
        var explanations: [Explanation] = []
        /// The notifications as the sink's `encode` made them (nil without one).
        var encoded: [UInt8]?
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
    func judgeInParallel(_ fixes: [Fix], _ subjects: [Range<Int>], _ states: inout [SubjectState], cellOrder: [Int]? = nil,
                                 consume: (Int, SubjectResult, UnsafeMutableBufferPointer<SubjectState>) throws -> Void) throws {
        let width = subjects.count > 1 ? min(Parallel.width, subjects.count) : 1
        while workerCatalogs.count < width { workerCatalogs.append(WorkerCatalog(doors.areas)) }
        for c in workerCatalogs { c.limit = settings.maxPreparedAreas; c.skippingOutside = !explain }
        let lock = doors.areas.lock
        let planned = onDemand?.planned ?? doors.areas.plannedAreas
        let plan = planned.map { self.plan(fixes, $0, cellOrder: cellOrder) } ?? Plan(entries: [], spans: [])
        // Subject order, as they are written; but a subject that holds a
        // large share of the chunk first, or the chunk would end with one
        // thread judging it while the others wait.
        let total = fixes.count
        let heavy = subjects.indices.filter { subjects[$0].count * 8 * width >= total }
        let order = heavy.sorted { subjects[$0].count > subjects[$1].count }
            + subjects.indices.filter { subjects[$0].count * 8 * width < total }
        var failure: Error?
        // Only the buffers are taken here; the work is ChunkWork's.
        plan.withBuffers { shares, spans in
            fixes.withUnsafeBufferPointer { fixes in
                states.withUnsafeMutableBufferPointer { states in
                    let work = ChunkWork(engine: self, fixes: fixes, subjects: subjects, states: states,
                                         plan: planned.map { ChunkWork.PlanBuffers(shares: shares, spans: spans, areas: $0) })
                    do {
                        try Parallel.share(order, width: width, consumingInOrder: { i in
                            try lock.with { try consume(i, work.take(i), states) }
                        }, work.judge)
                    } catch {
                        failure = error
                    }
                }
            }
        }
        if let failure { throw failure }
    }

    /// A chunk's plan: per share of the cells, its entries; per fix, its span.
    struct Plan {
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
    func plan(_ fixes: [Fix], _ areas: PlannedAreas, cellOrder: [Int]?) -> Plan {
        let width = min(Parallel.width, max(1, fixes.count / 10_000))
        let runs = width == 1 ? 1 : width * 16
        var plan = Plan(entries: [[UInt32]](repeating: [], count: runs),
                        spans: [CandidatePlan.Span](repeating: CandidatePlan.Span(), count: fixes.count))
        let skippingOutside = !explain
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
                        CandidatePlan.plan(fixes.buffer, share, share: r, areas: areas, skippingOutside: skippingOutside, into: &entries.buffer[r], spans: spans.buffer)
                    }
                }
            }
        }
        return plan
    }
}

/// One chunk on the judging threads: what every thread reads (the fixes,
/// the plan) and what each writes apart (a subject's state and result, at
/// the subject's index). `judge` is a judging thread's job for one subject;
/// `take` hands a judged subject's result to the calling thread.
final class ChunkWork: @unchecked Sendable {
    struct PlanBuffers {
        let shares: [UnsafeBufferPointerBox<UInt32>]
        let spans: UnsafeBufferPointerBox<CandidatePlan.Span>
        let areas: PlannedAreas
    }

    private let fixes: UnsafeBufferPointer<Fix>
    private let subjects: [Range<Int>]
    private let states: UnsafeMutableBufferPointer<SubjectState>
    private let results: UnsafeMutableBufferPointer<BatchEngine.SubjectResult>
    private let plan: PlanBuffers?
    private let catalogs: [WorkerCatalog]
    private let explain: Bool
    private let filter: FixFilter?
    private let encode: (@Sendable ([Notification]) -> [UInt8]?)?

    init(engine: BatchEngine, fixes: UnsafeBufferPointer<Fix>, subjects: [Range<Int>],
         states: UnsafeMutableBufferPointer<SubjectState>, plan: PlanBuffers?) {
        self.fixes = fixes; self.subjects = subjects; self.states = states; self.plan = plan
        results = .allocate(capacity: subjects.count)
        results.initialize(repeating: BatchEngine.SubjectResult())
        catalogs = engine.workerCatalogs
        explain = engine.explain
        filter = engine.fixFilter
        encode = engine.doors.sink.encode
    }

    deinit { results.deinitialize().deallocate() }

    /// Judges subject `i`'s fixes on judging thread `worker`, with that thread's catalog.
    func judge(worker: Int, subject i: Int) {
        var judge = SubjectJudge(catalog: catalogs[worker], explain: explain, fixFilter: filter)
        var r = BatchEngine.SubjectResult()
        // Read once per subject, not per fix: the plan's areas are shared by
        // every thread, and a retain per fix would be a write to a cache line
        // the other cores read.
        let (fixes, states, plan) = (self.fixes, self.states, self.plan)
        do {
            for k in subjects[i] {
                if let plan {
                    let s = plan.spans.buffer[k]
                    let entries = UnsafeBufferPointer(rebasing: plan.shares[Int(s.share)].buffer[Int(s.start)..<Int(s.end)])
                    r.notifications += try judge.judge(fixes[k], &states[i], plan: SubjectJudge.PlannedFix(entries, plan.areas))
                } else {
                    r.notifications += try judge.judge(fixes[k], &states[i])
                }
            }
        } catch {
            r.error = error
        }
        r.counters = judge.counters
        r.explanations = judge.explanations
        if let encode, r.error == nil { r.encoded = encode(r.notifications) }
        results[i] = r
    }

    /// Subject `i`'s result, once judged; its memory goes as soon as it is handed over.
    func take(_ i: Int) -> BatchEngine.SubjectResult {
        let r = results[i]
        results[i] = BatchEngine.SubjectResult()
        return r
    }
}
