/// What an area's rules let judging skip, worked out once when the area is
/// prepared. Each short-circuit in front of the plain algorithm names the
/// trait that makes it safe, so the reason a step may be skipped is stated
/// here, once:
///
///     if hint.inside && hint.insideOnlyLengthens && stay is INSIDE → lengthen the streak, nothing else
///     if traits.contains(.verdictIsContainment) → the verdict is shape.contains(fix), no rule read
///     if traits.contains(.outsideIsCertain) → a fix outside the shape is .outside, no margin read
public struct AreaTraits: OptionSet, Sendable, Equatable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A fix inside the shape, on a stay already INSIDE, only lengthens the
    /// streak (behaviour §3, §4): no validity period (the area applies at
    /// every time), no IN accuracy limit and confidence 0 (inside the shape
    /// is an inside verdict at any accuracy), and no DWELL condition (the
    /// stay's length could make one due). IN and OUT conditions do not
    /// matter: they fire on a transition, which such a fix never makes.
    public static let insideOnlyLengthens = AreaTraits(rawValue: 1 << 0)
    /// A fix outside the shape gets `.outside` whatever its accuracy and
    /// time: no validity period, no OUT accuracy limit, confidence 0.
    public static let outsideIsCertain = AreaTraits(rawValue: 1 << 1)
    /// The verdict is the shape's containment alone, whatever the fix's
    /// accuracy and time: `outsideIsCertain`, and no IN accuracy limit.
    public static let verdictIsContainment = AreaTraits(rawValue: 1 << 2)
    /// The area has conditions: counting a verdict reads the area itself.
    public static let hasConditions = AreaTraits(rawValue: 1 << 3)

    /// `confidence` is the area's own or the catalog's default.
    init(_ d: AreaDefinition, confidence: Double, conditions: Int, dwellConditions: Int) {
        var t: AreaTraits = []
        let timeless = d.validFrom == nil && d.validUntil == nil
        if timeless && d.inAccuracyMaxM == nil && confidence == 0 && dwellConditions == 0 { t.insert(.insideOnlyLengthens) }
        if timeless && d.outAccuracyMaxM == nil && confidence == 0 {
            t.insert(.outsideIsCertain)
            if d.inAccuracyMaxM == nil { t.insert(.verdictIsContainment) }
        }
        if conditions > 0 { t.insert(.hasConditions) }
        self = t
    }
}
