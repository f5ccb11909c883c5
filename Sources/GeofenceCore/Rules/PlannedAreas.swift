/// Every area of a catalog by its index in a `CandidateGrid` (area_id
/// order), with what judging by a `CandidatePlan` needs kept beside it in
/// dense arrays: the plan reads a slot and the area's shape, and the judge
/// (`SubjectJudge+Plan.swift`) reads a 6-byte `Counts` and the area itself
/// only for conditions.
///
/// Why two arrays: the judge looks an area up for every stay that changes
/// (several a fix in a busy city), at random. Counts of 6 bytes an area fit
/// a large catalog's in a core's cache; slots eight times larger do not,
/// and a lookup would miss.
///
/// Made once, after every area has been prepared, or empty, for a catalog
/// prepared as a batch reaches it (`init(grid:)`, then `place` and `empty`
/// between chunks); read-only while judging threads (or distributed tasks
/// with a read-only catalog) share it.
public final class PlannedAreas: @unchecked Sendable {
    public let grid: CandidateGrid
    private(set) var slots: [Slot]
    private(set) var counts: [Counts]
    /// Keeps the areas the slots point at alive; nil where no area is placed.
    private var areas: [JudgedArea?]

    struct Slot {
        let area: Unmanaged<JudgedArea>
        let shape: Unmanaged<PreparedShape>
        /// With `.verdictIsContainment` the plan reads the shape, not the area.
        let traits: AreaTraits
    }

    /// What counting a verdict needs (`CountingRules`), packed.
    struct Counts {
        let inConfirm: UInt16, outConfirm: UInt16
        let flags: UInt8
        static let hasConditions: UInt8 = 1
        /// `AreaTraits.outsideIsCertain`.
        static let outsideIsCertain: UInt8 = 2
        /// Confirm counts too large to pack: read them from the area.
        static let large: UInt8 = 4
        static let hasDwellConditions: UInt8 = 8

        init(_ a: JudgedArea) {
            let d = a.definition
            let fits = (0...Int(UInt16.max)).contains(d.inConfirmCount) && (0...Int(UInt16.max)).contains(d.outConfirmCount)
            inConfirm = fits ? UInt16(d.inConfirmCount) : 0
            outConfirm = fits ? UInt16(d.outConfirmCount) : 0
            flags = (a.traits.contains(.hasConditions) ? Self.hasConditions : 0) | (a.traits.contains(.outsideIsCertain) ? Self.outsideIsCertain : 0)
                | (fits ? 0 : Self.large) | (a.dwellConditions.isEmpty ? 0 : Self.hasDwellConditions)
        }

        var outsideIsCertain: Bool { flags & Self.outsideIsCertain != 0 }
    }

    /// `areas[i]` is the area at grid index i.
    public init(grid: CandidateGrid, areas: [JudgedArea]) {
        precondition(areas.count == grid.ids.count, "one area per grid index")
        self.grid = grid
        self.areas = areas
        slots = areas.map(Self.slot)
        counts = areas.map(Counts.init)
    }

    /// No area placed yet: every slot is `vacant`'s until `place` fills it.
    /// A plan must only meet placed areas (its fixes' candidates, and the
    /// areas of its subjects' stays), which the caller places before it.
    public init(grid: CandidateGrid) {
        self.grid = grid
        areas = [JudgedArea?](repeating: nil, count: grid.ids.count)
        slots = [Slot](repeating: Self.slot(Self.vacant), count: grid.ids.count)
        counts = [Counts](repeating: Counts(Self.vacant), count: grid.ids.count)
    }

    /// Puts `area` at grid index `i`. Not while a plan is read.
    public func place(_ area: JudgedArea, at i: Int) {
        areas[i] = area
        slots[i] = Self.slot(area)
        counts[i] = Counts(area)
    }

    /// Lets go of the area at grid index `i`. Not while a plan is read.
    public func empty(_ i: Int) {
        areas[i] = nil
        slots[i] = Self.slot(Self.vacant)
        counts[i] = Counts(Self.vacant)
    }

    /// Whether an area is placed at grid index `i`.
    public func isPlaced(_ i: Int) -> Bool { areas[i] != nil }

    /// What an empty slot points at: an area with no shape and no
    /// conditions, so that a slot read by mistake is an area nothing is
    /// inside of (never a dangling pointer).
    private static let vacant = JudgedArea(definition: AreaDefinition(areaId: "", shape: .polygons([])), defaultConfidence: 0, conditions: [])

    private static func slot(_ a: JudgedArea) -> Slot {
        Slot(area: Unmanaged.passUnretained(a), shape: Unmanaged.passUnretained(a.shape), traits: a.traits)
    }

    /// The counting rules of area `i`, from its packed counts when they fit.
    @inline(__always)
    func rules(_ i: Int, _ c: Counts) -> CountingRules {
        if c.flags & Counts.large != 0 { return slots[i].area._withUnsafeGuaranteedRef { CountingRules($0) } }
        return CountingRules(inConfirm: Int(c.inConfirm), outConfirm: Int(c.outConfirm), hasConditions: c.flags & Counts.hasConditions != 0,
                             hasDwellConditions: c.flags & Counts.hasDwellConditions != 0)
    }
}
