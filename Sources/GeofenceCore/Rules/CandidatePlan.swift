/// The candidate areas of a batch of fixes with their verdicts, worked out
/// in the order of the grid's cells instead of subject by subject; the
/// judge then replays each subject's fixes against its stays with the
/// verdicts already known (SubjectJudge+Plan.swift).
///
/// Why: a verdict depends on the fix and the area only, never on the
/// subject's state (behaviour §3, §4), so it need not be worked out in the
/// subject's order. Judged subject by subject, a moving subject meets areas
/// that are not in the CPU cache at nearly every fix, and judging waits on
/// memory. Fixes that fall in one grid cell meet the same areas, so taken
/// cell by cell each area is read about once per cell instead of once per
/// fix.
///
/// What a fix's plan holds is exactly what the grid's candidate walk
/// (`CandidateGrid.forEachCandidate`, leaving out areas the masks show
/// outside unless the judge explains) gives, in the same order, each with
/// the verdict the judge would have worked out: so judging with a plan
/// changes nothing but speed. The plan keeps no reasons: with `--explain`
/// the judge works them out from the area when it replays a verdict that
/// did not count.
///
/// Threads plan shares of one batch side by side: each appends to entries
/// of its own, and writes the spans of its own fixes.
public enum CandidatePlan {
    /// Where a fix's candidates are: `entries[share][start..<end]`.
    public struct Span: Sendable {
        public var share: Int32 = 0, start: Int32 = 0, end: Int32 = 0
        public init() {}
    }

    /// What was worked out for one candidate; an entry is grid index << 3 | code.
    public enum Code: UInt32 {
        case inside = 0, outside, undecided
        /// Outside the area's validity period at the fix's time.
        case outsideValidity
        /// Inside (by the masks, or by the shape) an area whose inside fixes
        /// only lengthen an INSIDE stay (`AreaTraits.insideOnlyLengthens`): the verdict
        /// is inside, and the judge need not read the area, nor its counts,
        /// unless the stay changes.
        case insideLengthens
    }

    @inline(__always)
    public static func decode(_ e: UInt32) -> (index: Int, code: Code) {
        (Int(e >> 3), Code(rawValue: e & 7) ?? .undecided)
    }

    /// Fix indices of `fixes` in the order of the grid's cells, and within a
    /// cell of its sub-cells (fixes outside the grid last): the order in which
    /// `plan` reads the fewest areas cold, and meets one sub-cell's masks
    /// and boundary edges for several fixes in a row.
    public static func cellOrder(_ fixes: UnsafeBufferPointer<Fix>, _ grid: CandidateGrid) -> [Int] {
        // One sortable word per fix: its sub-cell key above, its index below;
        // sorted, then cut down to the index where it lies (no second array).
        let bits = Int.bitWidth - fixes.count.leadingZeroBitCount
        var keys = [Int](repeating: 0, count: fixes.count)
        for j in fixes.indices {
            keys[j] = (grid.subcellKey(of: fixes[j].position) ?? grid.cellCount * 64) << bits | j
        }
        keys.sort()
        let mask = (1 << bits) - 1
        for k in keys.indices { keys[k] &= mask }
        return keys
    }

    /// Plans the fixes at `order` (indices into `fixes`) as share `share`:
    /// appends their candidates to `entries` and sets their `spans`.
    /// `skippingOutside`: leave out the areas the masks show not holding the
    /// fix. Not when explaining: outside an area, a fix whose error circle
    /// reaches into it is undecided there, and that is explained.
    public static func plan(_ fixes: UnsafeBufferPointer<Fix>, _ order: ArraySlice<Int>, share: Int, areas: PlannedAreas,
                            skippingOutside: Bool = true, into entries: inout [UInt32], spans: UnsafeMutableBufferPointer<Span>) {
        let grid = areas.grid
        areas.slots.withUnsafeBufferPointer { slots in
            for j in order {
                let fix = fixes[j]
                var span = Span()
                span.share = Int32(share)
                span.start = Int32(entries.count)
                var frame: FixFrame?
                grid.forEachCandidate(at: fix.position, skippingOutside: skippingOutside) { i, knownInside in
                    let slot = slots[i]
                    let code: Code
                    let lengthens = slot.traits.contains(.insideOnlyLengthens)
                    if knownInside && lengthens {
                        code = .insideLengthens
                    } else if slot.traits.contains(.verdictIsContainment) {
                        let inside = knownInside || slot.shape._withUnsafeGuaranteedRef({ $0.contains(fix.position) })
                        code = inside ? (lengthens ? .insideLengthens : .inside) : .outside
                    } else {
                        code = slot.area._withUnsafeGuaranteedRef { a in
                            guard a.isValid(at: fix.ts) else { return .outsideValidity }
                            let v = a.rule.verdict(a.shape, at: fix.position, accuracy: fix.accuracy, knownInside: knownInside) {
                                if let frame { return frame }
                                let f = FixFrame(fix.position)
                                frame = f
                                return f
                            }
                            return v == .inside ? .inside : v == .outside ? .outside : .undecided
                        }
                    }
                    entries.append(UInt32(i) << 3 | code.rawValue)
                }
                span.end = Int32(entries.count)
                spans[j] = span
            }
        }
    }
}
