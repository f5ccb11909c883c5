#if canImport(Glibc)
import Glibc
#endif

/// A chunk's candidate plan (`CandidatePlan`) made in waves: the chunk's
/// subjects cut into consecutive groups, the first group planned before
/// judging starts and every later one on a planning thread while the
/// groups before it are judged and written.
///
///     let waves = PlanWaves(fixes, subjects, areas: planned, width: 2, wavesFrom: 100_000, cellOrder: nil, plan: share)
///     waves.startPlanning()              // wave 0 now, the rest on a thread of their own
///     let buffers = waves.buffers(forSubject: i)   // a judging thread: waits for i's wave
///     waves.finish()                     // joins the planning thread
///
/// Why: the calling thread writes what the judging threads decide, and its
/// writes are a batch's critical path (`Parallel.share(consumingInOrder:)`).
/// Planned whole, a chunk of a million fixes kept that thread waiting for
/// the plan before its first write; planned in waves, it waits for the
/// first wave only, a thirty-second of the chunk, and the rest of the plan
/// is made on the cores the writes leave over.
///
/// The rules it keeps (Parallel.swift's contract):
/// - A wave's plan is written by the planning threads only, before the
///   wave is published under `signal`; judging threads read it only after.
/// - The spans are one buffer for the chunk's fixes, each wave writing the
///   spans of its own fixes; the shares are one table of buffers, each
///   wave writing its own slots (wave w's runs at `w * runs …`).
/// - Every wave is planned (the planning thread does not stop early on its
///   own), so a judging thread waiting for one is never left waiting; the
///   caller stops it with `finish`, after the judging threads are joined.
final class PlanWaves: @unchecked Sendable {
    /// Subject index ranges, one per wave, in order.
    let waves: [Range<Int>]
    /// Runs of cells each wave is planned in (`BatchEngine.plan`).
    let runs: Int
    private let fixes: UnsafeBufferPointer<Fix>
    private let subjects: [Range<Int>]
    private let areas: PlannedAreas
    private let width: Int
    private let cellOrder: [Int]?
    private let planShare: PlanShare
    private let spans: UnsafeMutableBufferPointer<CandidatePlan.Span>
    private let shares: UnsafeMutableBufferPointer<UnsafeBufferPointer<UInt32>>
    private let signal = Signal()
    private var published = 0
    private var stopped = false
    private var planner: pthread_t?

    /// Plans one run of cells: the fixes `order` names, into `entries`, each
    /// fix's span naming share `share` (`CandidatePlan.plan`).
    typealias PlanShare = (_ order: ArraySlice<Int>, _ share: Int, _ entries: inout [UInt32], _ spans: UnsafeMutableBufferPointer<CandidatePlan.Span>) -> Void

    /// `subjects` are the chunk's subjects' fix ranges over `fixes`, in order;
    /// `cellOrder` is `CandidatePlan.cellOrder` of the fixes when known.
    init(_ fixes: UnsafeBufferPointer<Fix>, _ subjects: [Range<Int>], areas: PlannedAreas, width: Int, wavesFrom: Int, cellOrder: [Int]?,
         plan: @escaping PlanShare) {
        self.fixes = fixes; self.subjects = subjects; self.areas = areas; self.width = width
        self.cellOrder = cellOrder; self.planShare = plan
        waves = Self.cut(subjects, fixes: fixes.count, width: width, wavesFrom: wavesFrom)
        // As many runs as the cores take in turn, 16 each (BatchEngine.plan
        // of old: a run's cost follows its cells' areas, not its fixes).
        let planWidth = min(width, max(1, fixes.count / 10_000))
        runs = planWidth == 1 ? 1 : planWidth * 16
        spans = .allocate(capacity: fixes.count)
        spans.initialize(repeating: CandidatePlan.Span())
        shares = .allocate(capacity: waves.count * runs)
        shares.initialize(repeating: UnsafeBufferPointer(start: nil, count: 0))
    }

    deinit {
        for s in shares { s.deallocate() }
        shares.deallocate()
        spans.deallocate()
    }

    /// Where the waves are cut: one wave for one thread, one subject or a
    /// chunk of fewer than `wavesFrom` fixes (`BatchSettings.planWaveFixes`);
    /// else a first wave of about a thirty-second of the fixes, each next
    /// one twice the one before, up to a quarter (a subject is never cut).
    static func cut(_ subjects: [Range<Int>], fixes total: Int, width: Int, wavesFrom: Int) -> [Range<Int>] {
        guard width > 1, total >= wavesFrom, subjects.count > 1 else { return [0..<subjects.count] }
        var waves: [Range<Int>] = []
        var start = 0, size = total / 32
        while start < subjects.count {
            let from = subjects[start].lowerBound
            var end = start + 1
            while end < subjects.count && subjects[end].lowerBound - from < size { end += 1 }
            waves.append(start..<end)
            start = end
            size = min(size * 2, total / 4)
        }
        return waves
    }

    /// Plans the first wave on every core, then starts the planning thread
    /// for the rest (or plans them here, should no thread be had).
    func startPlanning() {
        plan(wave: 0)
        guard waves.count > 1 else { return }
        planner = Parallel.spawn { [self] in
            // Below the writing thread, as the judging threads are.
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
            setpriority(which, 0, min(19, getpriority(which, 0) + 10))
            for w in 1..<waves.count where !signal.change({ stopped }) { plan(wave: w) }
        }
        if planner == nil { for w in 1..<waves.count { plan(wave: w) } }
    }

    /// What subject `i`'s fixes are judged with, once its wave is planned.
    func buffers(forSubject i: Int) -> ChunkWork.PlanBuffers {
        let w = waves.firstIndex { $0.contains(i) }!
        signal.wait(until: { published > w }, then: {})
        return ChunkWork.PlanBuffers(shares: UnsafeBufferPointer(shares), spans: UnsafeBufferPointer(spans), areas: areas)
    }

    /// Stops planning waves not begun and waits for the planning thread.
    func finish() {
        signal.change { stopped = true }
        if let planner { Parallel.join(planner) }
        planner = nil
    }

    /// Plans wave `w`'s fixes in `runs` runs of cells shared by `width`
    /// threads, then publishes it.
    private func plan(wave w: Int) {
        guard !waves[w].isEmpty else { return signal.change { published = w + 1 } }
        let fixRange = subjects[waves[w].lowerBound].lowerBound..<subjects[waves[w].upperBound - 1].upperBound
        let order: [Int] = cellOrder.map { all in all.filter { fixRange.contains($0) } }
            ?? CandidatePlan.cellOrder(UnsafeBufferPointer(rebasing: fixes[fixRange]), areas.grid).map { $0 + fixRange.lowerBound }
        let (runs, first) = (self.runs, w * self.runs)
        let (spans, shares) = (UnsafeMutableBufferPointerBox(self.spans), UnsafeMutableBufferPointerBox(self.shares))
        let planShare = self.planShare
        Parallel.share(Array(0..<runs), width: min(width, max(1, order.count / 10_000))) { _, r in
            var entries: [UInt32] = []
            planShare(order[(order.count * r / runs)..<(order.count * (r + 1) / runs)], first + r, &entries, spans.buffer)
            let stored = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: entries.count)
            _ = stored.initialize(from: entries)
            shares.buffer[first + r] = UnsafeBufferPointer(stored)
        }
        signal.change { published = w + 1 }
    }
}
