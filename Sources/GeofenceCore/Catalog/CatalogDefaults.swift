/// What an area takes from its catalog where it says nothing itself
/// (behaviour §6): the confidence of an area with none, and the time zone
/// of an area with none, which its conditions with none take in turn.
/// Every door that prepares areas for judgement (the SQL layer's three
/// ways of reading them, `MemoryAreaSource`'s caller, a Spark task) makes
/// them here, so the rule is written once.
///
///     let defaults = CatalogDefaults(confidence: 0.5, zone: try TimeZone.load("Asia/Tokyo"))
///     let area = try defaults.judgedArea(definition, conditions: its, load: TimeZone.load)
public struct CatalogDefaults: Sendable {
    public let confidence: Double
    public let zone: TimeZone

    public init(confidence: Double, zone: TimeZone) { self.confidence = confidence; self.zone = zone }

    /// The zone of an area whose own is `name` (nil: none): its own, else the catalog's.
    public func areaZone(_ name: String?, load: (String) throws -> TimeZone) rethrows -> TimeZone {
        try name.map(load) ?? zone
    }

    /// The zone a condition is judged in: its own, else its area's (`areaZone`).
    public static func conditionZone(_ c: ConditionDefinition, areaZone: TimeZone, load: (String) throws -> TimeZone) rethrows -> TimeZone {
        try c.timezone.map(load) ?? areaZone
    }

    /// The area ready for judgement: its confidence and every condition's
    /// zone resolved. `load` gives a named zone, or throws for one that
    /// does not load (the area is then not made).
    public func judgedArea(_ a: AreaDefinition, conditions: [ConditionDefinition],
                           load: (String) throws -> TimeZone) rethrows -> JudgedArea {
        let areaZone = try self.areaZone(a.timezone, load: load)
        let zoned = try conditions.map { ($0, try Self.conditionZone($0, areaZone: areaZone, load: load)) }
        return JudgedArea(definition: a, defaultConfidence: confidence, conditions: zoned)
    }
}
