/// What judgement needs of the catalog, read-only: the areas that may contain
/// a point, and each area's rules. The SQL layer implements it over a
/// SpatiaLite database; a distributed task can implement it over a read-only
/// copy of the catalog.
public protocol JudgeCatalog: AnyObject {
    /// Ids of areas whose bounding box contains the point (a superset of the
    /// areas that contain it), sorted by area_id.
    func candidateAreas(at p: LonLat) throws -> [String]
    /// The area with its prepared shape and conditions; nil if it no longer exists.
    func area(_ id: String) throws -> JudgedArea?
    /// Visits the candidate areas (as `candidateAreas`, in area_id order) with
    /// each area, nil if it no longer exists, and what the index already
    /// knows of it. Catalogs with an in-memory index override it to touch no
    /// string array or dictionary per candidate; they may also leave out
    /// areas known not to contain the point, when their caller judges every
    /// area it has a stay in anyway. Every area that contains the point must
    /// be visited: the judge takes any other for one that does not.
    func forEachCandidate(at p: LonLat, _ body: (_ id: String, _ area: JudgedArea?, _ hint: CandidateHint) throws -> Void) throws
    /// Calls `body` with `area(id)`. A catalog that keeps its areas alive
    /// itself overrides it to lend the area without retaining it.
    func withArea<R>(_ id: String, _ body: (JudgedArea?) throws -> R) throws -> R
}

/// What a catalog's index already knows of a candidate, so that the judge
/// can skip work; `.none` is always correct.
public struct CandidateHint: Equatable, Sendable {
    /// The area's shape is known to contain the point: no containment test.
    public var inside: Bool
    /// The area's shape is known not to contain the point (it was not a
    /// candidate: the point is outside its box, or the masks show it outside).
    public var outside = false
    /// The area's inside fixes only lengthen an INSIDE stay
    /// (`AreaTraits.insideOnlyLengthens`), known without reading the
    /// area itself: for the dozen areas a subject stays in at once, reading
    /// each area would be a wait on memory at every fix.
    public var insideOnlyLengthens: Bool
    public init(inside: Bool, insideOnlyLengthens: Bool, outside: Bool = false) {
        self.inside = inside; self.insideOnlyLengthens = insideOnlyLengthens; self.outside = outside
    }
    public static let none = CandidateHint(inside: false, insideOnlyLengthens: false)
    /// For an area the subject has a stay in that is not among the point's candidates.
    public static let notCandidate = CandidateHint(inside: false, insideOnlyLengthens: false, outside: true)
}

extension JudgeCatalog {
    public func withArea<R>(_ id: String, _ body: (JudgedArea?) throws -> R) throws -> R { try body(try area(id)) }

    public func forEachCandidate(at p: LonLat, _ body: (_ id: String, _ area: JudgedArea?, _ hint: CandidateHint) throws -> Void) throws {
        try forEachCandidateByLookup(at: p, body)
    }

    /// `forEachCandidate` by `candidateAreas` and `area`: the default, and the
    /// fallback of a catalog whose index is not in memory.
    public func forEachCandidateByLookup(at p: LonLat, _ body: (_ id: String, _ area: JudgedArea?, _ hint: CandidateHint) throws -> Void) throws {
        for id in try candidateAreas(at: p) { try body(id, try area(id), .none) }
    }
}

/// What counting a verdict in a stay needs of an area: its confirm counts,
/// and whether it has conditions (which then need the area itself), and
/// DWELL ones (which may come due at a fix that makes no transition).
/// Small enough to keep beside an index (`PlannedAreas`).
public struct CountingRules: Equatable, Sendable {
    public let inConfirm: Int, outConfirm: Int
    public let hasConditions: Bool
    public let hasDwellConditions: Bool
    public init(_ area: JudgedArea) {
        inConfirm = area.definition.inConfirmCount
        outConfirm = area.definition.outConfirmCount
        hasConditions = !area.conditions.isEmpty
        hasDwellConditions = !area.dwellConditions.isEmpty
    }
    public init(inConfirm: Int, outConfirm: Int, hasConditions: Bool, hasDwellConditions: Bool) {
        self.inConfirm = inConfirm; self.outConfirm = outConfirm
        self.hasConditions = hasConditions; self.hasDwellConditions = hasDwellConditions
    }

    /// Whether a verdict counted with this transition (nil: none) can make a
    /// condition due, so that notifying must read the area: a transition
    /// with conditions, or any count with DWELL ones (the stay's length).
    @inline(__always)
    func mayNotify(_ transition: StayState.Transition?) -> Bool {
        hasConditions && (transition != nil || hasDwellConditions)
    }
}

/// What notifying reads of one condition of an area, kept beside its
/// definition so that a notification copies no string: the id, the
/// suppression, whether any other filter applies (else `ConditionFilter`
/// is not asked: a condition with no filter always passes), and its zone,
/// unretained (the area's `conditions` keep it alive).
struct NotifyingCondition {
    let conditionId: Int64
    /// Its position in the area's `conditions` (condition_id order).
    let definition: Int
    /// `renotify_suppress_days`, 0 when none: only then is the last-notified day read and kept.
    let suppressDays: Int
    /// A weekday, daily window or date period limits it.
    let filtered: Bool
    let zone: Unmanaged<TimeZone>
    /// IN, OUT or DWELL: the order of the area's `notifying`.
    let timing: ConditionDefinition.Timing

    init(_ c: ConditionDefinition, zone: TimeZone, definition: Int) {
        conditionId = c.conditionId
        timing = c.timing
        self.definition = definition
        suppressDays = max(0, c.renotifySuppressDays ?? 0)
        filtered = c.weekdays != nil || c.startMinute != nil || c.endMinute != nil || c.startDay != nil || c.endDay != nil
        self.zone = Unmanaged.passUnretained(zone)
    }
}

/// An area ready for judgement: definition, prepared shape, the verdict rule
/// with the confidence resolved, and its conditions with their zones resolved.
public final class JudgedArea: @unchecked Sendable {
    public let definition: AreaDefinition
    public let shape: PreparedShape
    public let rule: VerdictRule
    /// Sorted by condition_id, each with its time zone.
    public let conditions: [(ConditionDefinition, TimeZone)]
    /// What notifying reads of each condition, without its strings
    /// (`NotifyingCondition`): the IN ones, then the OUT ones, then the
    /// DWELL ones, each in condition_id order, so that a transition reads
    /// only the conditions of its timing. One array, not one per timing:
    /// a million areas are prepared at once.
    let notifying: [NotifyingCondition]
    /// Where the IN, the OUT and the DWELL ones are in `notifying`.
    let inNotifying: Range<Int>, outNotifying: Range<Int>, dwellNotifying: Range<Int>
    /// The DWELL conditions, as `notifying[dwellNotifying]` in order: a fix
    /// inside an area reads only these.
    public let dwellConditions: [DwellCondition]
    /// What its rules let judging skip (`AreaTraits`), worked out once.
    public let traits: AreaTraits

    /// A DWELL condition as the judge reads it at every inside fix.
    public struct DwellCondition: Sendable {
        public let conditionId: Int64
        /// The dwell in microseconds; nil when it overflows (a catalog written
        /// by another tool may hold any dwell_s): such a condition never comes due.
        public let micros: Int64?
    }

    /// The area with `conditions`, in any order: the plain way, for any conditions.
    public convenience init(definition: AreaDefinition, defaultConfidence: Double, conditions: [(ConditionDefinition, TimeZone)]) {
        self.init(definition: definition, defaultConfidence: defaultConfidence, prepared: Prepared(conditions))
    }

    /// The area whose only conditions are its implied pair (IN `first`, OUT
    /// `first + 1`, nothing else set: `ImpliedConditions`), judged in `zone`:
    /// exactly what the plain init makes of that pair, without the arrays
    /// it would build to sort and order two conditions. Most catalogs'
    /// areas have only their pair, and a batch prepares every area it meets.
    public convenience init(definition: AreaDefinition, defaultConfidence: Double, impliedPair first: Int64, zone: TimeZone) {
        let (inC, outC) = ConditionDefinition.impliedPair(area: definition.areaId, first: first)
        let pair = Prepared(conditions: [(inC, zone), (outC, zone)],
                            notifying: [NotifyingCondition(inC, zone: zone, definition: 0), NotifyingCondition(outC, zone: zone, definition: 1)],
                            ins: 1, outs: 1, dwell: [])
        self.init(definition: definition, defaultConfidence: defaultConfidence, prepared: pair)
    }

    private init(definition: AreaDefinition, defaultConfidence: Double, prepared c: Prepared) {
        self.definition = definition
        self.shape = PreparedShape(definition.shape)
        self.rule = VerdictRule(inAccuracyMax: definition.inAccuracyMaxM, outAccuracyMax: definition.outAccuracyMaxM,
                                confidence: definition.confidence ?? defaultConfidence)
        (conditions, notifying, dwellConditions) = (c.conditions, c.notifying, c.dwell)
        (inNotifying, outNotifying, dwellNotifying) = (0..<c.ins, c.ins..<c.ins + c.outs, c.ins + c.outs..<c.notifying.count)
        traits = AreaTraits(definition, confidence: rule.confidence, conditions: c.conditions.count, dwellConditions: c.dwell.count)
    }

    /// An area's conditions as judgement reads them: by condition_id, and
    /// the IN, OUT and DWELL ones' `NotifyingCondition`s in that order
    /// (`ins` and `outs` of the first two).
    private struct Prepared {
        let conditions: [(ConditionDefinition, TimeZone)]
        let notifying: [NotifyingCondition]
        let ins: Int, outs: Int
        let dwell: [DwellCondition]

        init(conditions: [(ConditionDefinition, TimeZone)], notifying: [NotifyingCondition], ins: Int, outs: Int, dwell: [DwellCondition]) {
            (self.conditions, self.notifying, self.ins, self.outs, self.dwell) = (conditions, notifying, ins, outs, dwell)
        }

        init(_ conditions: [(ConditionDefinition, TimeZone)]) {
            // Read in condition_id order already, as every door reads them: sorted only when not.
            let inOrder = zip(conditions, conditions.dropFirst()).allSatisfy { $0.0.conditionId < $1.0.conditionId }
            let sorted = inOrder ? conditions : conditions.sorted { $0.0.conditionId < $1.0.conditionId }
            // Each condition copied out of the array once (a copy retains its
            // strings, and every area of a catalog is made here), then put in
            // timing order, each timing's kept in condition_id order.
            var notifying: [NotifyingCondition] = []
            notifying.reserveCapacity(sorted.count)
            for k in sorted.indices {
                let (c, zone) = sorted[k]
                notifying.append(NotifyingCondition(c, zone: zone, definition: k))
            }
            JudgedArea.orderByTiming(&notifying)
            let ins = notifying.prefix { $0.timing == .IN }.count
            let outs = notifying[ins...].prefix { $0.timing == .OUT }.count
            let dwell = notifying[(ins + outs)...].map { n in
                let (micros, overflow) = (sorted[n.definition].0.dwellSeconds ?? 0).multipliedReportingOverflow(by: 1_000_000)
                return DwellCondition(conditionId: n.conditionId, micros: overflow ? nil : micros)
            }
            self.init(conditions: sorted, notifying: notifying, ins: ins, outs: outs, dwell: dwell)
        }
    }

    /// IN, then OUT, then DWELL, each timing's in the order they came: an
    /// insertion sort, an area has a handful.
    fileprivate static func orderByTiming(_ all: inout [NotifyingCondition]) {
        func rank(_ t: ConditionDefinition.Timing) -> Int {
            switch t {
            case .IN: 0
            case .OUT: 1
            case .DWELL: 2
            }
        }
        for i in all.indices.dropFirst() {
            var j = i
            while j > 0 && rank(all[j - 1].timing) > rank(all[j].timing) {
                all.swapAt(j - 1, j)
                j -= 1
            }
        }
    }

    /// Inside the validity period (both ends included)?
    public func isValid(at t: Timestamp) -> Bool {
        if let from = definition.validFrom, t < from { return false }
        if let until = definition.validUntil, t > until { return false }
        return true
    }
}
