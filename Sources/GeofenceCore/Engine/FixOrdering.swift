/// The valid fixes of a batch, handed back ordered by subject, time and input
/// order: the order judgement needs (behaviour §4), whatever order they came in.
///
/// Up to `inMemoryLimit` fixes are kept in memory (~52 bytes a fix) and
/// ordered there; past that they go to the doors' `FixSpill` (the SQL
/// layer's: a temporary table that SQLite sorts), so a batch never needs to
/// fit in memory; in memory is the usual case because a spill is slow and
/// all on one core.
///
/// In memory, fixes stay in one array in input order with their subject's
/// number beside them, and are ordered once at the end by a counting sort
/// over the subjects. Why not an array per subject: appending to a
/// dictionary's value copies and checks it on every fix, on the thread the
/// preparation's threads are waiting for.
///
/// Subjects are told apart and ordered by their UTF-8 bytes, as SQLite's
/// BINARY collation does, never by Swift's canonical equivalence: "é" and
/// "e\u{301}" are two subjects, as they are two rows in `gf_stays`.
final class FixOrdering {
    private let spills: FixSpillOpener?
    private let inMemoryLimit: Int
    /// Every subject met, numbered in order of first appearance.
    private var subjects: [String] = []
    private var numberOf: [SubjectKey: Int32] = [:]
    /// The fixes held in memory, in input order, and their subjects' numbers.
    private var fixes: [Fix] = []
    private var subjectOf: [Int32] = []
    private var spill: FixSpill?

    /// Waited for before a spill is opened (the areas being read through the
    /// same connection until then: `AllAreasPreparation.waitUntilRead`).
    var beforeSpill: AllAreasPreparation?

    /// `expected`: how many fixes to make room for at once (at most the
    /// limit). Without `spills`, every batch is held in memory.
    init(spills: FixSpillOpener?, inMemoryLimit: Int, expected: Int = 0) {
        self.spills = spills
        self.inMemoryLimit = spills == nil ? Int.max : inMemoryLimit
        let room = min(expected, inMemoryLimit + 1)
        fixes.reserveCapacity(room)
        subjectOf.reserveCapacity(room)
    }

    func add(_ f: Fix) throws {
        if let spill { return try spill.add(f) }
        fixes.append(f)
        subjectOf.append(number(of: f.subjectId))
        if fixes.count > inMemoryLimit { try spillOut() }
    }

    /// The subject's number; a file that lists a subject's fixes together
    /// asks for the same one again and is answered without hashing.
    private func number(of id: String) -> Int32 {
        if let last = subjectOf.last, subjects[Int(last)].hasSameUTF8(as: id) { return last }
        let key = SubjectKey(id)
        if let n = numberOf[key] { return n }
        let n = Int32(subjects.count)
        numberOf[key] = n
        subjects.append(id)
        return n
    }

    /// Calls `body` with each fix in order; `newSubject` is true for the
    /// first fix of each subject.
    func forEachOrdered(_ body: (_ fix: Fix, _ newSubject: Bool) throws -> Void) throws {
        if let spill { return try spill.forEachOrdered(body) }
        let (order, runs) = inMemoryOrder()
        for run in runs {
            for k in run.fixes { try body(fixes[Int(order[k])], k == run.fixes.lowerBound) }
        }
    }

    /// Every fix in order with each subject's id and run, when all are held
    /// in memory (nil after a spill); the staging keeps none of them.
    ///
    /// Why: the fixes are reordered in their own array, where
    /// `forEachOrdered` would have them copied into a new one: tens of
    /// megabytes of fresh memory, dear to fault in on a VM whose host backs
    /// a page only when it is first written (ARCHITECTURE.md, "Fresh memory").
    func takeOrdered() -> (fixes: [Fix], subjects: [(id: String, fixes: Range<Int>)])? {
        guard spill == nil else { return nil }
        let (order, runs) = inMemoryOrder()
        var taken = fixes
        (fixes, subjectOf) = ([], [])
        Self.gather(&taken, order)
        return (taken, runs)
    }

    /// Reorders `a` so that `a[k]` is what `a[order[k]]` was, one cycle of
    /// the permutation after another: each fix is moved once, none copied.
    static func gather(_ a: inout [Fix], _ order: [Int32]) {
        precondition(a.count == order.count, "one position per fix")
        var done = [Bool](repeating: false, count: a.count)
        a.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress else { return }
            for k in 0..<p.count where !done[k] {
                done[k] = true
                var j = k, from = Int(order[k])
                guard from != k else { continue }
                let held = (base + k).move()
                while from != k {
                    (base + j).moveInitialize(from: base + from, count: 1)
                    j = from
                    done[j] = true
                    from = Int(order[j])
                }
                (base + j).initialize(to: held)
            }
        }
    }

    /// The held fixes' indices in order, and the run of them that is each
    /// subject's, in byte order of the ids; each run in time and then input order.
    private func inMemoryOrder() -> (order: [Int32], runs: [(id: String, fixes: Range<Int>)]) {
        let rank = subjects.indices.sorted { SubjectKey(subjects[$0]) < SubjectKey(subjects[$1]) }
        // Where each subject's run starts, in rank order (a counting sort: stable).
        var start = [Int](repeating: 0, count: subjects.count + 1)
        var count = [Int](repeating: 0, count: subjects.count)
        for s in subjectOf { count[Int(s)] += 1 }
        for (r, s) in rank.enumerated() { start[r + 1] = start[r] + count[s] }
        var next = [Int](repeating: 0, count: subjects.count)
        for (r, s) in rank.enumerated() { next[s] = start[r] }
        var order = [Int32](repeating: 0, count: fixes.count)
        for (i, s) in subjectOf.enumerated() {
            order[next[Int(s)]] = Int32(i)
            next[Int(s)] += 1
        }
        let fixes = self.fixes
        let runs = rank.indices.map { r in (id: subjects[rank[r]], fixes: start[r]..<start[r + 1]) }
        for run in runs {
            let ts = { (i: Int32) in fixes[Int(i)].ts }
            // Most files list a subject's fixes in time order already.
            let slice = order[run.fixes]
            if !zip(slice, slice.dropFirst()).allSatisfy({ ts($0) <= ts($1) }) {
                // Stable: equal times keep their input order (indices grow with it).
                order[run.fixes].sort { (ts($0), $0) < (ts($1), $1) }
            }
        }
        return (order, runs)
    }

    /// Moves what is in memory to the spill, in input order (which the
    /// spill keeps for equal times).
    private func spillOut() throws {
        guard let spills else { return }
        beforeSpill?.waitUntilRead()
        spill = try spills.openSpill()
        let held = fixes
        (fixes, subjectOf, subjects, numberOf) = ([], [], [], [:])
        for f in held { try spill?.add(f) }
    }
}

/// A subject id compared, hashed and ordered by its UTF-8 bytes.
public struct SubjectKey: Hashable, Comparable {
    public let id: String
    public init(_ id: String) { self.id = id }
    public static func == (a: SubjectKey, b: SubjectKey) -> Bool { a.id.hasSameUTF8(as: b.id) }
    public static func < (a: SubjectKey, b: SubjectKey) -> Bool { a.id.utf8.lexicographicallyPrecedes(b.id.utf8) }
    public func hash(into h: inout Hasher) {
        if id.utf8.withContiguousStorageIfAvailable({ h.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in id.utf8 { h.combine(byte) }
        }
    }
}
