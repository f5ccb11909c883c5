/// Every area of a catalog by its index in a `CandidateGrid` (area_id
/// order), with what judging by a `CandidatePlan` needs kept beside it in
/// dense arrays: the plan reads a slot and the area's shape, and the judge
/// (`SubjectJudge+Plan.swift`) reads a 6-byte `Counts` and the area itself
/// only for conditions.
///
/// Why two arrays: the judge looks an area up for every stay that changes
/// (~4 a fix on the medium benchmark), at random. Its counts for 100,000
/// areas fit in a core's cache (~600 KB); 48-byte slots did not, and reading
/// one per lookup was a third of judging's time.
///
/// Made once, after every area has been prepared; read-only afterwards, so
/// judging threads (or distributed tasks with a read-only catalog) share it.
public final class PlannedAreas: @unchecked Sendable {
    public let grid: CandidateGrid
    let slots: [Slot]
    let counts: [Counts]
    /// Keeps the areas the slots point at alive.
    private let areas: [JudgedArea]

    struct Slot {
        let area: Unmanaged<JudgedArea>
        let shape: Unmanaged<PreparedShape>
        let plain: Bool
        /// The verdict is the shape's containment alone, whatever the fix's
        /// accuracy and time: no validity period, no accuracy limits,
        /// confidence 0. The plan then reads the shape, not the area.
        let verdictIsContainment: Bool
    }

    /// What counting a verdict needs (`CountingRules`), packed.
    struct Counts {
        let inConfirm: UInt16, outConfirm: UInt16
        let flags: UInt8
        static let hasConditions: UInt8 = 1
        /// `PlannedAreas.outsideIsPlain`.
        static let outsideIsPlain: UInt8 = 2
        /// Confirm counts too large to pack: read them from the area.
        static let large: UInt8 = 4

        init(_ a: JudgedArea) {
            let d = a.definition
            let fits = (0...Int(UInt16.max)).contains(d.inConfirmCount) && (0...Int(UInt16.max)).contains(d.outConfirmCount)
            inConfirm = fits ? UInt16(d.inConfirmCount) : 0
            outConfirm = fits ? UInt16(d.outConfirmCount) : 0
            flags = (a.conditions.isEmpty ? 0 : Self.hasConditions) | (PlannedAreas.outsideIsPlain(a) ? Self.outsideIsPlain : 0)
                | (fits ? 0 : Self.large)
        }

        var outsideIsPlainArea: Bool { flags & Self.outsideIsPlain != 0 }
    }

    /// `areas[i]` is the area at grid index i.
    public init(grid: CandidateGrid, areas: [JudgedArea]) {
        precondition(areas.count == grid.ids.count, "one area per grid index")
        self.grid = grid
        self.areas = areas
        slots = areas.map { a in
            Slot(area: Unmanaged.passUnretained(a), shape: Unmanaged.passUnretained(a.shape), plain: a.isPlain,
                 verdictIsContainment: Self.outsideIsPlain(a) && a.rule.inAccuracyMax == nil)
        }
        counts = areas.map(Counts.init)
    }

    /// No validity period, no OUT accuracy limit, confidence 0: a fix
    /// outside the shape gets `.outside`, whatever its accuracy and time.
    static func outsideIsPlain(_ a: JudgedArea) -> Bool {
        a.definition.validFrom == nil && a.definition.validUntil == nil && a.rule.outAccuracyMax == nil && a.rule.confidence == 0
    }

    /// The counting rules of area `i`, from its packed counts when they fit.
    @inline(__always)
    func rules(_ i: Int, _ c: Counts) -> CountingRules {
        if c.flags & Counts.large != 0 { return slots[i].area._withUnsafeGuaranteedRef { CountingRules($0) } }
        return CountingRules(inConfirm: Int(c.inConfirm), outConfirm: Int(c.outConfirm), hasConditions: c.flags & Counts.hasConditions != 0)
    }
}
