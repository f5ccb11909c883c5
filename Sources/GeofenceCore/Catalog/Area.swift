/// An area as the catalog stores it (behaviour §1), validated.
public struct AreaDefinition: Equatable, Sendable {
    public var areaId: String
    public var groupId: String?
    public var name: String?
    public var shape: Shape
    public var inAccuracyMaxM: Double?
    public var inConfirmCount: Int = 1
    public var outAccuracyMaxM: Double?
    public var outConfirmCount: Int = 1
    public var validFrom: Timestamp?
    public var validUntil: Timestamp?
    /// CEP confidence in [0, 1); nil = the database default.
    public var confidence: Double?
    public var timezone: String?
    /// The feature's other properties, in file order.
    public var properties: [(String, JSONValue)] = []

    public init(areaId: String, shape: Shape) { self.areaId = areaId; self.shape = shape }

    public static func == (l: AreaDefinition, r: AreaDefinition) -> Bool {
        l.areaId == r.areaId && l.groupId == r.groupId && l.name == r.name && l.shape == r.shape
            && l.inAccuracyMaxM == r.inAccuracyMaxM && l.inConfirmCount == r.inConfirmCount
            && l.outAccuracyMaxM == r.outAccuracyMaxM && l.outConfirmCount == r.outConfirmCount
            && l.validFrom == r.validFrom && l.validUntil == r.validUntil && l.confidence == r.confidence
            && l.timezone == r.timezone && JSONValue.object(l.properties) == JSONValue.object(r.properties)
    }

    /// The property names that are area fields rather than free properties.
    public static let fieldNames: Set<String> = [
        "area_id", "group_id", "name", "in_accuracy_max_m", "in_confirm_count", "out_accuracy_max_m",
        "out_confirm_count", "valid_from", "valid_until", "confidence", "timezone", "radius_m",
        "circle_lat", "circle_lon", "circle_radius_m",
    ]

    /// Checks every field rule of behaviour §1; throws naming the field.
    public func validate() throws {
        if areaId.isEmpty { throw InputError("must not be empty", field: "area_id") }
        try validateValues()
        if let a = validFrom, let b = validUntil, b < a {
            throw InputError("valid_until \(b) is before valid_from \(a)", field: "valid_until")
        }
        if let tz = timezone, !TimeZoneNames.isKnown(tz) { throw InputError(TimeZoneNames.unknown(tz), field: "timezone") }
        try ShapeValidation.check(shape)
    }

    /// The rules of the numbers judging computes with (accuracy limits,
    /// confirm counts, confidence); throws naming the field. Also asked of
    /// every area read from a catalog (`AreaStore.area`): a value written
    /// past the catalog's CHECK constraints (a confidence of 7) would
    /// otherwise reach the arithmetic, which traps on it.
    public func validateValues() throws {
        if let v = inAccuracyMaxM, !(v.isFinite && v >= 0) { throw InputError("must be a number >= 0, got \(v)", field: "in_accuracy_max_m") }
        if let v = outAccuracyMaxM, !(v.isFinite && v >= 0) { throw InputError("must be a number >= 0, got \(v)", field: "out_accuracy_max_m") }
        if inConfirmCount < 1 { throw InputError("must be an integer >= 1, got \(inConfirmCount)", field: "in_confirm_count") }
        if outConfirmCount < 1 { throw InputError("must be an integer >= 1, got \(outConfirmCount)", field: "out_confirm_count") }
        if let c = confidence, !(c >= 0 && c < 1) { throw InputError("must be in [0, 1), got \(c)", field: "confidence") }
    }
}

public enum ShapeValidation {
    /// Structural checks that need no GEOS: closed rings of at least four
    /// positions, coordinates in range, a positive finite radius. (Self-
    /// intersection is GEOS's to judge; the SQL layer asks SpatiaLite.)
    public static func check(_ shape: Shape) throws {
        switch shape {
        case .circle(let c):
            try checkPosition(c.center, field: "geometry.coordinates")
            guard c.radiusM.isFinite, c.radiusM > 0 else {
                throw InputError("must be a number > 0, got \(c.radiusM)", field: "radius_m")
            }
            guard c.radiusM <= 10_000_000 else { throw InputError("must be at most 10,000 km, got \(c.radiusM)", field: "radius_m") }
        case .polygons(let polys):
            guard !polys.isEmpty else { throw InputError("has no polygons", field: "geometry.coordinates") }
            for (pi, poly) in polys.enumerated() {
                guard !poly.rings.isEmpty else { throw InputError("polygon \(pi) has no rings", field: "geometry.coordinates") }
                for (ri, ring) in poly.rings.enumerated() {
                    let at = polys.count > 1 ? "geometry.coordinates[\(pi)][\(ri)]" : "geometry.coordinates[\(ri)]"
                    guard ring.points.count >= 4 else {
                        throw InputError("ring has \(ring.points.count) positions; a closed ring needs at least 4", field: at)
                    }
                    for (k, p) in ring.points.enumerated() { try checkPosition(p, field: at + "[\(k)]") }
                    guard ring.points.first == ring.points.last else {
                        throw InputError("ring is not closed: first position \(fmt(ring.points.first!)) differs from last \(fmt(ring.points.last!))", field: at)
                    }
                }
            }
        }
    }

    static func fmt(_ p: LonLat) -> String { "[\(p.lon), \(p.lat)]" }

    static func checkPosition(_ p: LonLat, field: String) throws {
        guard p.lon.isFinite, p.lat.isFinite, (-180...180).contains(p.lon), (-90...90).contains(p.lat) else {
            throw InputError("coordinate \(fmt(p)) is out of range (longitude -180..180, latitude -90..90)", field: field)
        }
    }
}
