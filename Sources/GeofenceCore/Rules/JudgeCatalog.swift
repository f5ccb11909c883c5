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
    /// each area, nil if it no longer exists, and whether the area's shape is
    /// already known to contain the point (false: not known). Catalogs with
    /// an in-memory index override it to touch no string array or dictionary
    /// per candidate; they may also leave out areas known not to contain the
    /// point, when their caller judges every area it has a stay in anyway.
    func forEachCandidate(at p: LonLat, _ body: (_ id: String, _ area: JudgedArea?, _ knownInside: Bool) throws -> Void) throws
}

extension JudgeCatalog {
    public func forEachCandidate(at p: LonLat, _ body: (_ id: String, _ area: JudgedArea?, _ knownInside: Bool) throws -> Void) throws {
        try forEachCandidateByLookup(at: p, body)
    }

    /// `forEachCandidate` by `candidateAreas` and `area`: the default, and the
    /// fallback of a catalog whose index is not in memory.
    public func forEachCandidateByLookup(at p: LonLat, _ body: (_ id: String, _ area: JudgedArea?, _ knownInside: Bool) throws -> Void) throws {
        for id in try candidateAreas(at: p) { try body(id, try area(id), false) }
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

    public init(definition: AreaDefinition, defaultConfidence: Double, conditions: [(ConditionDefinition, TimeZone)]) {
        self.definition = definition
        self.shape = PreparedShape(definition.shape)
        self.rule = VerdictRule(inAccuracyMax: definition.inAccuracyMaxM, outAccuracyMax: definition.outAccuracyMaxM,
                                confidence: definition.confidence ?? defaultConfidence)
        self.conditions = conditions.sorted { $0.0.conditionId < $1.0.conditionId }
    }

    /// Inside the validity period (both ends included)?
    public func isValid(at t: Timestamp) -> Bool {
        if let from = definition.validFrom, t < from { return false }
        if let until = definition.validUntil, t > until { return false }
        return true
    }
}
