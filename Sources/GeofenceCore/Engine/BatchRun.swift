/// One `BatchEngine.run`: the batch's steps as methods over what they share
/// (read, choose, judge chunk by chunk, hand over; BatchEngine.swift tells
/// the order). Used once, then dropped.
final class BatchRun {
    private let engine: BatchEngine
    private var doors: BatchDoors { engine.doors }
    private var report = BatchReport()
    /// Counts and explains the invalid rows as they are read.
    private var rejects: SubjectJudge
    private let areaCount: Int
    /// Every area being prepared while the fixes are read, when their
    /// number was known ahead and meets most areas.
    private let early: AllAreasPreparation?
    private let ordering: FixOrdering
    private let progress: ((Int, Int) -> Void)?
    private var strategy = CandidateStrategy.rtreePerFix
    private var valid = 0, done = 0
    private var prepared = false, began = false
    /// The invalid rows' explanations: stored first, as the rows came.
    private var rowExplanations: [Explanation]?
    /// The chunk being filled: its fixes, subject after subject, and each subject's run of them.
    private var fixes: [Fix] = []
    private var subjects: [(id: String, fixes: Range<Int>)] = []
    /// True while the ordered fixes are those of a subject judged before the
    /// batch was cut short (`BatchEngine.resume`): they are skipped.
    private var skipping = false

    /// `expectedFixes`: the caller's guess at the batch's size (0: none);
    /// `known`: how many rows the sequence says it holds at least.
    init(_ engine: BatchEngine, expectedFixes: Int, known: Int, progress: ((Int, Int) -> Void)?) throws {
        self.engine = engine
        self.progress = progress
        rejects = SubjectJudge(catalog: engine.doors.areas, explain: engine.explain, fixFilter: engine.fixFilter)
        if let resume = engine.resume { report.counters = resume.counters }
        areaCount = try engine.doors.areas.areaCount
        let meetsMost = CandidateStrategy.meetsMost(fixes: max(expectedFixes, known), areas: areaCount,
                                                   maxPreparedAreas: engine.settings.maxPreparedAreas)
        early = meetsMost && areaCount > 0 ? engine.doors.areas.startPreparingAll() : nil
        // Room for three times the guess (which errs low): untouched room
        // costs no memory, while growing copied every fix into fresh pages.
        ordering = FixOrdering(spills: engine.doors.spill, inMemoryLimit: engine.settings.inMemoryFixes,
                               expected: max(known, 3 * expectedFixes))
        ordering.beforeSpill = early
    }

    /// Step 1: validates every row; valid fixes are held to be ordered, invalid ones counted.
    func read(_ rows: some Sequence<FixRow>) throws {
        for row in rows {
            // Nothing is stored while reading, so a requested stop is noticed here, not after the whole file.
            try doors.sink.checkStillWanted()
            if let e = row.readError { throw e }
            report.fixes += 1
            if let f = row.validFix {
                if row.readAsLocalTime { report.localTimes += 1 }
                if engine.feed.timeUnit == .milliseconds && f.ts < BatchReport.earlyMillisecondsBelow { report.earlyMillisecondTimes += 1 }
                try ordering.add(f)
            } else if case .failure(let why) = row.validated {
                reject(row, why)
            }
        }
        valid = report.fixes - rejects.counters.invalid
        // A resumed batch's first chunk stored them before the cut.
        rowExplanations = engine.resume == nil ? rejects.explanations : nil
    }

    private func reject(_ row: FixRow, _ why: InvalidFix) {
        let invalid = InvalidFix("row \(report.fixes): \(engine.feed.describe(why))", field: why.field)
        if report.firstInvalid == nil { report.firstInvalid = invalid.reason }
        if why.field == .accuracy && row.accuracy == nil && row.problem == nil { report.missingAccuracies += 1 }
        if why.field == .ts, let ts = row.ts {
            if Timestamp.looksLikeEpochMilliseconds(ts) { report.millisecondTimes += 1 }
            else if Timestamp.lacksOnlyOffset(ts) { report.offsetlessTimes += 1 }
        }
        rejects.reject(subjectId: row.subjectId ?? "", ts: row.time, at: row.readablePosition, invalid)
    }

    /// Steps 2 and 3: chooses the strategy, then judges the ordered fixes chunk by chunk.
    func judgeChunks() throws {
        strategy = CandidateStrategy.choose(fixes: valid, areas: areaCount, maxPreparedAreas: engine.settings.maxPreparedAreas,
                                            preparedEarly: early != nil || doors.areas.keepsEveryAreaPrepared)
        engine.onDemand = nil
        let limit = engine.settings.chunkLimit(strategy)
        // A batch that is one chunk takes the ordered fixes where they are (unless some are to be skipped).
        if valid <= limit, engine.resume == nil, let taken = ordering.takeOrdered() {
            (fixes, subjects) = (taken.fixes, taken.subjects)
        } else {
            fixes.reserveCapacity(min(valid, limit))
            try ordering.forEachOrdered { fix, newSubject in try add(fix, newSubject: newSubject, limit: limit) }
        }
        try judgeChunk()
    }

    /// Adds an ordered fix to the chunk, judging the chunk first when a new
    /// subject would take it past `limit` (a subject is never cut); a fix of
    /// a subject judged before a resumed batch was cut short is skipped.
    private func add(_ fix: Fix, newSubject: Bool, limit: Int) throws {
        if newSubject { skipping = engine.resume?.covers(fix.subjectId) ?? false }
        if skipping { return }
        if newSubject {
            if fixes.count >= limit { try judgeChunk() }
            subjects.append((fix.subjectId, fixes.count..<(fixes.count + 1)))
        } else {
            let last = subjects.count - 1
            subjects[last].fixes = subjects[last].fixes.lowerBound..<(fixes.count + 1)
        }
        fixes.append(fix)
    }

    /// Prepares the areas as the strategy says, once, before the first
    /// chunk is judged: until then this thread orders the fixes while the
    /// preparation's threads work.
    private func prepareOnce() throws {
        guard !prepared else { return }
        prepared = true
        switch strategy {
        case .prepareAll: if let early { try early.finish() } else { try doors.areas.prepareAllAreas() }
        case .onDemand: engine.onDemand = try doors.areas.openOnDemand()
        case .rtreePerFix, .windows: break
        }
    }

    /// The rows' explanations go first, once; then the sink hears of the batch's size.
    private func begin() throws {
        guard !began else { return }
        began = true
        try storeRowExplanations()
        try doors.sink.willStore(validFixes: valid)
    }

    private func storeRowExplanations() throws {
        try doors.sink.store(rowExplanations ?? [])
        rowExplanations = nil
    }

    /// Judges the chunk: its areas prepared, its subjects' states loaded,
    /// its subjects judged on every core while each is handed over in order.
    private func judgeChunk() throws {
        guard !subjects.isEmpty else { return }
        // While the areas are still being prepared, on the cores' other
        // work: the fixes' order for a plan needs only the grid's cells.
        let cellOrder = early?.cells().map { cells in fixes.withUnsafeBufferPointer { CandidatePlan.cellOrder($0, cells) } }
        try prepareOnce()
        try begin()
        var states = try subjects.map { try doors.states.load($0.id) }
        try engine.onDemand?.prepare(reachedBy: fixes, stays: states, limit: engine.settings.maxPreparedAreas)
        let before = states
        try engine.judgeInParallel(fixes, subjects.map(\.fixes), &states, cellOrder: cellOrder) { i, result, states in
            try handOver(result, states[i], before: before[i])
        }
        done += fixes.count
        progress?(done, valid)
        let last = subjects[subjects.count - 1].id
        fixes.removeAll(keepingCapacity: true)
        subjects.removeAll(keepingCapacity: true)
        try engine.afterChunk?(ChunkDone(lastSubject: last, counters: report.counters, rows: report.fixes))
    }

    /// One subject's state and results, handed over as soon as it is judged
    /// (in subject order, on this thread, under the source's lock).
    private func handOver(_ result: BatchEngine.SubjectResult, _ state: SubjectState, before: SubjectState) throws {
        if let error = result.error { throw error }
        try doors.states.save(state, before: before)
        try doors.sink.store(result.notifications, encoded: result.encoded)
        try doors.sink.store(result.explanations)
        report.counters.add(result.counters)
    }

    /// Step 4: a batch with no valid fix still waits for its preparation;
    /// the rows' explanations are stored if no chunk did; the sink is told.
    func finish() throws -> BatchReport {
        try prepareOnce()
        progress?(valid, valid)
        report.counters.add(rejects.counters)
        try storeRowExplanations()
        try doors.sink.finish()
        return report
    }
}
