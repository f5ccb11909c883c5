/// How a circle area is written in a file: as a Point with `radius_m` (the
/// engine's own form), or as the polygon tracing it (`CirclePolygon`), which
/// every GIS tool draws.
public enum CircleForm: String, Sendable, CaseIterable {
    case points
    case polygons
}

/// The attributes that make a traced polygon a circle again: `circle_lat`,
/// `circle_lon` (the centre, degrees) and `circle_radius_m`, the exact values
/// the catalog holds, where the polygon's vertices are only near them.
///
/// Importing, a Polygon feature (or a MultiPolygon of one polygon, as a
/// one-type layer may hold it) carrying all three is that circle, taken
/// exactly from the attributes, but only when its polygon is still the
/// circle's (`CirclePolygon.deviation` within `CirclePolygon.tolerance`): a
/// shape edited in a GIS tool after export is refused rather than silently
/// replaced by the old circle, and the message says to drop the attributes
/// to import the polygon as drawn. Some of the three without the others is
/// refused too: it is neither a circle nor clearly a free property.
public struct CircleAttributes: Equatable, Sendable {
    public static let names = ["circle_lat", "circle_lon", "circle_radius_m"]

    public var circle: Circle

    public init(_ circle: Circle) { self.circle = circle }

    /// The three properties, in the order written.
    public var properties: [(String, JSONValue)] {
        [("circle_lat", .number(JSONValue.numberText(circle.center.lat))),
         ("circle_lon", .number(JSONValue.numberText(circle.center.lon))),
         ("circle_radius_m", .number(JSONValue.numberText(circle.radiusM)))]
    }

    /// The circle a feature's properties `p` name, nil when they carry none of
    /// the three; throws naming what is missing when they carry only some.
    static func read(_ p: JSONValue) throws -> CircleAttributes? {
        let values = try names.map { try number(p, $0) }
        if values.allSatisfy({ $0 == nil }) { return nil }
        guard let lat = values[0], let lon = values[1], let radius = values[2] else {
            let missing = zip(names, values).filter { $0.1 == nil }.map { $0.0 }
            let present = zip(names, values).filter { $0.1 != nil }.map { $0.0 }
            throw InputError("has \(present.joined(separator: " and ")) but no \(missing.joined(separator: " or ")): a polygon traced "
                             + "from a circle carries all three of circle_lat, circle_lon, circle_radius_m; give all three, or drop them "
                             + "to import the polygon as drawn", field: "properties." + missing[0])
        }
        return CircleAttributes(Circle(center: LonLat(lon: lon, lat: lat), radiusM: radius))
    }

    /// The number a circle attribute holds. A format that cannot hold every
    /// double (a Shapefile keeps 15 decimal places) carries it as text, which
    /// is read as the number it spells.
    static func number(_ p: JSONValue, _ key: String) throws -> Double? {
        guard case .string(let s)? = p[key] else { return try GeoJSONArea.optionalNumber(p, key) }
        guard let d = Double(s), d.isFinite else {
            throw InputError("must be a number, or a number written as text, got \(Echo.quoted(s))", field: "properties." + key)
        }
        return d
    }

    /// The circle, after checking that `geometry` is a Polygon tracing it.
    func circle(outlined geometry: JSONValue) throws -> Shape {
        let drop = "drop the circle_lat, circle_lon and circle_radius_m attributes to import the polygon as drawn"
        // A one-type layer (Shapefile, FlatGeobuf) may have made it a MultiPolygon of one polygon.
        guard geometry["type"] == .string("Polygon") || geometry["type"] == .string("MultiPolygon") else {
            let type = geometry["type"]?.plainText ?? "no type"
            throw InputError("a feature with circle_lat, circle_lon and circle_radius_m must be the Polygon tracing that circle, "
                             + "not a \(type); \(drop)", field: "geometry.type")
        }
        try ShapeValidation.check(.circle(circle))
        guard case .polygons(let polys) = try GeoJSONArea.shape(from: geometry, radius: nil), polys.count == 1,
              polys[0].rings.count == 1 else {
            throw InputError("a circle's polygon is one ring, and this one has more (holes, or parts); \(drop)", field: "geometry.coordinates")
        }
        let ring = polys[0].rings[0]
        let worst = CirclePolygon.deviation(of: ring, from: circle)
        let tolerance = CirclePolygon.tolerance(radius: circle.radiusM)
        guard worst.metres <= tolerance else {
            let place = worst.atEdgeMiddle ? "the middle of its edge from vertex \(worst.vertex)" : "its vertex \(worst.vertex)"
            throw InputError("this polygon is not the circle its attributes describe (centre \(circle.center.lat), \(circle.center.lon), "
                             + "radius \(JSONValue.numberText(circle.radiusM)) m): \(place) is \(Self.metres(worst.metres)) from that circle, "
                             + "more than the \(Self.metres(tolerance)) a traced circle may stray, so its shape was changed after export; "
                             + drop, field: "geometry.coordinates")
        }
        return .circle(circle)
    }

    /// A distance for a message: metres to the centimetre.
    static func metres(_ d: Double) -> String {
        guard d.isFinite else { return "\(d) m" }
        return "\(Double((d * 100).rounded()) / 100) m"
    }
}
