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

    /// The zone of `area`, whose own is `name` (nil: none): its own, else
    /// the catalog's. A zone that does not load is an `UnloadableZone`.
    public func areaZone(_ name: String?, area: String, load: (String) throws -> TimeZone) rethrows -> TimeZone {
        guard let name else { return zone }
        do { return try load(name) } catch {
            throw UnloadableZone(row: "area \(Echo.quoted(area))", reason: "\(error)")
        }
    }

    /// The zone a condition is judged in: its own, else its area's
    /// (`areaZone`); one that does not load names the condition.
    public static func conditionZone(_ c: ConditionDefinition, areaZone: TimeZone, load: (String) throws -> TimeZone) rethrows -> TimeZone {
        guard let name = c.timezone else { return areaZone }
        do { return try load(name) } catch {
            throw UnloadableZone(row: "condition \(c.conditionId) of area \(Echo.quoted(c.areaId))", reason: "\(error)")
        }
    }

    /// The area ready for judgement: its confidence and every condition's
    /// zone resolved. `load` gives a named zone, or throws for one that
    /// does not load (the area is then not made).
    public func judgedArea(_ a: AreaDefinition, conditions: [ConditionDefinition],
                           load: (String) throws -> TimeZone) rethrows -> JudgedArea {
        let areaZone = try self.areaZone(a.timezone, area: a.areaId, load: load)
        let zoned = try conditions.map { ($0, try Self.conditionZone($0, areaZone: areaZone, load: load)) }
        return JudgedArea(definition: a, defaultConfidence: confidence, conditions: zoned)
    }

    /// `judgedArea` of an area whose only conditions are its implied pair
    /// (IN `first`, OUT `first + 1`, judged in the area's zone), made
    /// directly (`JudgedArea.init(definition:defaultConfidence:impliedPair:zone:)`).
    public func judgedArea(_ a: AreaDefinition, impliedPair first: Int64, load: (String) throws -> TimeZone) rethrows -> JudgedArea {
        JudgedArea(definition: a, defaultConfidence: confidence, impliedPair: first, zone: try areaZone(a.timezone, area: a.areaId, load: load))
    }
}

/// A time zone an area or a condition names that does not load: a row the
/// import's check never saw (written by SQL or another tool). Its doors
/// report it as the catalog's fault, naming the row and its column.
public struct UnloadableZone: Error, CustomStringConvertible {
    /// `area 'A'` or `condition 7 of area 'A'`.
    public let row: String
    public let reason: String
    public var description: String { "\(row), timezone: \(reason)" }
}
