/// Every area of a catalog by its index in a `CandidateGrid` (area_id
/// order), each with what judging a planned verdict needs kept in one dense
/// slot: judging with a `CandidatePlan` then reads an area itself only for
/// its conditions (`SubjectJudge+Plan.swift`).
///
/// Made once, after every area has been prepared; read-only afterwards, so
/// judging threads (or distributed tasks with a read-only catalog) share it.
public final class PlannedAreas: @unchecked Sendable {
    public let grid: CandidateGrid
    let slots: [Slot]
    /// Keeps the areas the slots point at alive.
    private let areas: [JudgedArea?]

    struct Slot {
        /// Nil for an area that no longer exists.
        let area: Unmanaged<JudgedArea>?
        let plain: Bool
        /// A fix outside the shape gets `.outside` whatever its accuracy and
        /// time: no validity period, no OUT accuracy limit, confidence 0.
        let outsideIsPlain: Bool
        let counting: CountingRules?
    }

    /// `areas[i]` is the area at grid index i (nil: gone).
    public init(grid: CandidateGrid, areas: [JudgedArea?]) {
        precondition(areas.count == grid.ids.count, "one area per grid index")
        self.grid = grid
        self.areas = areas
        slots = areas.map { a in
            guard let a else { return Slot(area: nil, plain: false, outsideIsPlain: false, counting: nil) }
            let d = a.definition
            return Slot(area: Unmanaged.passUnretained(a), plain: a.isPlain,
                        outsideIsPlain: d.validFrom == nil && d.validUntil == nil && a.rule.outAccuracyMax == nil && a.rule.confidence == 0,
                        counting: CountingRules(a))
        }
    }
}
