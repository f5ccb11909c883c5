/// A batch's judging threads (the rules they keep: Parallel.swift): the
/// subjects of a chunk judged on every core while the calling thread writes
/// each subject's result as soon as it is judged, and the chunk's plan
/// worked out cell by cell, wave by wave, ahead of the judging (PlanWaves).
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
        var failure: Error?
        fixes.withUnsafeBufferPointer { fixes in
            let waves = planned.map { PlanWaves(fixes, subjects, areas: $0, width: Parallel.width, wavesFrom: settings.planWaveFixes,
                                                cellOrder: cellOrder, plan: planShare(fixes, $0)) }
            waves?.startPlanning()
            defer { waves?.finish() }
            // Subject order, as they are written; but within a wave a subject
            // that holds a large share of it first, or the wave would end with
            // one thread judging it while the others wait.
            var order: [Int] = []
            for wave in waves?.waves ?? [0..<subjects.count] {
                let total = wave.reduce(0) { $0 + subjects[$1].count }
                let heavy = wave.filter { subjects[$0].count * 8 * width >= total }
                order += heavy.sorted { subjects[$0].count > subjects[$1].count } + wave.filter { subjects[$0].count * 8 * width < total }
            }
            states.withUnsafeMutableBufferPointer { states in
                let work = ChunkWork(engine: self, fixes: fixes, subjects: subjects, states: states, plan: waves)
                do {
                    try Parallel.share(order, width: width, consumingInOrder: { i in
                        try lock.with { try consume(i, work.take(i), states) }
                    }, work.judge)
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
    }

    /// How one run of cells of a chunk is planned (`PlanWaves.PlanShare`):
    /// the run's fixes' candidates and verdicts, into `entries` sized first
    /// for the most the run can hold, so appending never moves it (a dense
    /// centre's fixes have over 100 candidates each, a suburb's a few, and
    /// pages never written cost nothing).
    private func planShare(_ fixes: UnsafeBufferPointer<Fix>, _ areas: PlannedAreas) -> PlanWaves.PlanShare {
        let (fixes, skippingOutside) = (UnsafeBufferPointerBox(fixes), !explain)
        return { order, share, entries, spans in
            entries.reserveCapacity(order.reduce(0) { $0 + areas.grid.candidateBound(at: fixes.buffer[$1].position) })
            CandidatePlan.plan(fixes.buffer, order, share: share, areas: areas, skippingOutside: skippingOutside, into: &entries, spans: spans)
        }
    }
}

/// One chunk on the judging threads: what every thread reads (the fixes,
/// the plan) and what each writes apart (a subject's state and result, at
/// the subject's index). `judge` is a judging thread's job for one subject;
/// `take` hands a judged subject's result to the calling thread.
final class ChunkWork: @unchecked Sendable {
    /// A planned wave as the judging threads read it: every share's
    /// entries (of the waves planned so far), each fix's span, the areas.
    struct PlanBuffers {
        let shares: UnsafeBufferPointer<UnsafeBufferPointer<UInt32>>
        let spans: UnsafeBufferPointer<CandidatePlan.Span>
        let areas: PlannedAreas
    }

    private let fixes: UnsafeBufferPointer<Fix>
    private let subjects: [Range<Int>]
    private let states: UnsafeMutableBufferPointer<SubjectState>
    private let results: UnsafeMutableBufferPointer<BatchEngine.SubjectResult>
    private let plan: PlanWaves?
    private let catalogs: [WorkerCatalog]
    private let explain: Bool
    private let filter: FixFilter?
    private let encode: (@Sendable ([Notification]) -> [UInt8]?)?

    init(engine: BatchEngine, fixes: UnsafeBufferPointer<Fix>, subjects: [Range<Int>],
         states: UnsafeMutableBufferPointer<SubjectState>, plan: PlanWaves?) {
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
        let (fixes, states, plan) = (self.fixes, self.states, self.plan?.buffers(forSubject: i))
        do {
            for k in subjects[i] {
                if let plan {
                    let s = plan.spans[k]
                    let entries = UnsafeBufferPointer(rebasing: plan.shares[Int(s.share)][Int(s.start)..<Int(s.end)])
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
