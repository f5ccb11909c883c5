/// GeoJSON (RFC 7946) features to and from area definitions.
///
/// A feature's properties carry the area fields under the behaviour contract's names; a circle
/// is a Point feature with `radius_m`. The id is `properties.area_id`, else the
/// feature's `id`. Everything else in `properties` is kept as free properties.
public enum GeoJSONArea {
    public static func area(from feature: JSONValue, group: String? = nil) throws -> AreaDefinition {
        try area(from: feature, keys: FeatureKeys(group: group))
    }

    /// The area a feature describes, its id and group read as `keys` say.
    public static func area(from feature: JSONValue, keys: FeatureKeys) throws -> AreaDefinition {
        guard case .object = feature else { throw InputError("feature must be an object, got \(feature.typeName)") }
        guard feature["type"] == .string("Feature") else {
            throw InputError("must be \"Feature\", got \(feature["type"].map { Echo.plain($0.serialized) } ?? "nothing")", field: "type")
        }
        let props: [(String, JSONValue)]
        switch feature["properties"] {
        case .object(let m)?: props = m
        case .null?, nil: props = []
        case let v?: throw InputError("must be an object or null, got \(v.typeName)", field: "properties")
        }
        let p = JSONValue.object(props)

        var rawId: String
        // A named id field is the only place the id is taken from.
        let ownId = keys.idField == nil ? feature["id"] : nil
        switch (p[keys.idName], ownId) {
        case (.string(let s)?, _) where keys.idField == nil || !s.isEmpty: rawId = s
        case (.number(let n)?, _): rawId = n
        case (let v?, _) where v != .null && keys.idField == nil:
            throw InputError("must be a string or number, got \(v.typeName)", field: "properties.area_id")
        case (let v?, _) where v != .null && v != .string(""):
            throw InputError("must be a string or number to be the area id (--id-field), got \(v.typeName)", field: "properties." + keys.idName)
        case (_, .string(let s)?): rawId = s
        case (_, .number(let n)?): rawId = n
        default:
            if let named = keys.idField {
                throw InputError("feature has no \(named) property (or it is empty), which --id-field names as the area id", field: "properties." + named)
            }
            throw InputError("feature has no area_id property and no id", field: "properties.area_id")
        }
        // --group wins over a group_id property: the caller named the group
        // explicitly. A group_id is taken as written, string or number, like
        // area_id. An id that already begins with `<group>#` (as an exported
        // one re-imported, or one written in full) is not prefixed again. An
        // empty group_id is none (a spreadsheet's empty cell), not the group
        // "" that would make ids `#A`; an empty --group is refused up front.
        let groupId: String?
        switch keys.group.map(JSONValue.string) ?? p[keys.groupName] {
        case nil, .null?, .string("")?: groupId = nil
        case .string(let s)?: groupId = s
        case .number(let n)?: groupId = n
        case let v?: throw InputError("must be a string or number, got \(v.typeName)", field: "properties." + keys.groupName)
        }
        rawId = grouped(rawId, in: groupId)

        guard let geometry = feature["geometry"], geometry != .null else { throw InputError("feature has no geometry", field: "geometry") }
        let traced = try CircleAttributes.read(p)
        let shape = try traced.map { try $0.circle(outlined: geometry) } ?? shape(from: geometry, radius: try optionalNumber(p, "radius_m"))

        var a = AreaDefinition(areaId: rawId, shape: shape)
        a.groupId = groupId
        a.name = try optionalString(p, "name")
        a.inAccuracyMaxM = try optionalNumber(p, "in_accuracy_max_m")
        a.outAccuracyMaxM = try optionalNumber(p, "out_accuracy_max_m")
        a.inConfirmCount = try optionalInteger(p, "in_confirm_count") ?? 1
        a.outConfirmCount = try optionalInteger(p, "out_confirm_count") ?? 1
        a.validFrom = try optionalTime(p, "valid_from")
        a.validUntil = try optionalTime(p, "valid_until")
        a.confidence = try optionalNumber(p, "confidence")
        a.timezone = try optionalString(p, "timezone")
        a.properties = props.filter { !AreaDefinition.fieldNames.contains($0.0) && !keys.isKey($0.0) }
        do { try a.validate() } catch var e as InputError {
            if let f = e.field, !f.hasPrefix("geometry"), !f.hasPrefix("properties") { e.field = "properties." + f }
            throw e
        }
        return a
    }

    /// An id in its group: `<group>#<id>`, unless it already begins with `<group>#`.
    static func grouped(_ id: String, in group: String?) -> String {
        guard let g = group, !id.hasPrefix(g + "#") else { return id }
        return g + "#" + id
    }

    /// The id a feature's area would be stored under (its area_id, else its
    /// id, in its group as `area(from:group:)` puts it), for naming the
    /// feature in an error even when the feature itself is refused; nil when
    /// it has no usable id.
    public static func idAsStored(in feature: JSONValue, group: String?) -> String? {
        idAsStored(in: feature, keys: FeatureKeys(group: group))
    }

    /// The same, with the id and group read as `keys` say.
    public static func idAsStored(in feature: JSONValue, keys: FeatureKeys) -> String? {
        let p = feature["properties"]
        guard let raw = p?[keys.idName]?.plainText ?? (keys.idField == nil ? feature["id"]?.plainText : nil) else { return nil }
        var groupId = keys.group
        if groupId == nil, let g = p?[keys.groupName]?.plainText, !g.isEmpty { groupId = g }
        return grouped(raw, in: groupId)
    }

    public static func shape(from g: JSONValue, radius: Double?) throws -> Shape {
        guard case .string(let type)? = g["type"] else { throw InputError("geometry has no type", field: "geometry.type") }
        // The type first: a GeometryCollection has no coordinates, and is no area whatever it holds.
        guard ["Polygon", "MultiPolygon", "Point"].contains(type) else {
            throw InputError("geometry type \(type) is not an area: use Polygon, MultiPolygon, or Point with radius_m", field: "geometry.type")
        }
        guard let coords = g["coordinates"] else { throw InputError("geometry has no coordinates", field: "geometry.coordinates") }
        switch type {
        case "Polygon":
            if radius != nil { throw InputError("radius_m is only for Point (circle) features", field: "properties.radius_m") }
            return .polygons([try polygon(coords, at: "geometry.coordinates")])
        case "MultiPolygon":
            if radius != nil { throw InputError("radius_m is only for Point (circle) features", field: "properties.radius_m") }
            guard case .array(let items) = coords else { throw InputError("must be an array of polygons", field: "geometry.coordinates") }
            return .polygons(try items.enumerated().map { try polygon($1, at: "geometry.coordinates[\($0)]") })
        case "Point":
            guard let r = radius else {
                throw InputError("a Point area is a circle and needs a radius_m property", field: "properties.radius_m")
            }
            return .circle(Circle(center: try position(coords, at: "geometry.coordinates"), radiusM: r))
        default:
            throw InputError("geometry type \(type) is not an area: use Polygon, MultiPolygon, or Point with radius_m", field: "geometry.type")
        }
    }

    static func polygon(_ v: JSONValue, at: String) throws -> Polygon {
        guard case .array(let rings) = v else { throw InputError("must be an array of rings", field: at) }
        return Polygon(try rings.enumerated().map { ri, ring in
            guard case .array(let positions) = ring else { throw InputError("must be an array of positions", field: at + "[\(ri)]") }
            // The path is spelled out only for an error: per vertex it would cost more than reading one.
            return Ring(try positions.enumerated().map { try position($1, at: at + "[\(ri)][\($0)]") })
        })
    }

    static func position(_ v: JSONValue, at: @autoclosure () -> String) throws -> LonLat {
        guard case .array(let xs) = v, xs.count >= 2, xs.count <= 3 else {
            throw InputError("a position must be [longitude, latitude] (optionally altitude)", field: at())
        }
        func coordinate(_ x: JSONValue) throws -> Double {
            guard case .number(let n) = x, let value = Double(n), value.isFinite else {
                throw InputError("a coordinate must be a finite number, got \(Echo.plain(x.serialized))", field: at())
            }
            return value
        }
        let lon = try coordinate(xs[0]), lat = try coordinate(xs[1])
        if xs.count == 3 { _ = try coordinate(xs[2]) }
        return LonLat(lon: withoutRoundingSlip(lon, bound: 180), lat: withoutRoundingSlip(lat, bound: 90))
    }

    /// How far past ±180 (longitude) or ±90 (latitude) a coordinate may be
    /// and still be taken as that bound: 1e-9 degree, about 0.1 mm. Writers
    /// and reprojections leave the bounds a few units in the last place off
    /// (Natural Earth's 180.00000000000006); further out is no rounding, and
    /// is refused as out of range. A coordinate in range is never changed.
    public static let roundingSlip = 1e-9

    /// `v`, or `±bound` when it is past that by no more than `roundingSlip`.
    static func withoutRoundingSlip(_ v: Double, bound: Double) -> Double {
        guard abs(v) > bound, abs(v) - bound <= roundingSlip else { return v }
        return v < 0 ? -bound : bound
    }

    static func optionalString(_ p: JSONValue, _ key: String) throws -> String? {
        switch p[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        case let v?: throw InputError("must be a string, got \(v.typeName)", field: "properties." + key)
        }
    }

    static func optionalNumber(_ p: JSONValue, _ key: String) throws -> Double? {
        switch p[key] {
        case nil, .null?: return nil
        case .number(let n)?:
            guard let d = Double(n), d.isFinite else { throw InputError("number \(n) is out of range", field: "properties." + key) }
            return d
        case let v?: throw InputError("must be a number, got \(v.typeName) \(v.serialized.prefix(40))", field: "properties." + key)
        }
    }

    static func optionalInteger(_ p: JSONValue, _ key: String) throws -> Int? {
        guard let d = try optionalNumber(p, key) else { return nil }
        guard d == d.rounded(), abs(d) < 1e9 else { throw InputError("must be an integer, got \(d)", field: "properties." + key) }
        return Int(d)
    }

    static func optionalTime(_ p: JSONValue, _ key: String) throws -> Timestamp? {
        switch p[key] {
        case nil, .null?: return nil
        case .string(let s)?:
            do { return try Timestamp.parse(s) } catch let e as Timestamp.ParseError {
                throw InputError(e.description, field: "properties." + key)
            }
        case .number(let n)?:
            guard let t = Timestamp.parseUnixSecondsUnchecked(Timestamp.unixSecondsText(jsonNumber: n)) else { throw InputError("bad Unix time \(n)", field: "properties." + key) }
            guard t.isStorable else { throw InputError(Timestamp.ParseError.outOfRange(n).description, field: "properties." + key) }
            return t
        case let v?: throw InputError("must be a time string, got \(v.typeName)", field: "properties." + key)
        }
    }

    // MARK: Export

    /// The feature for an area, such that `area(from:)` gives the same area back.
    /// A grouped id `<group>#<id>` is written with group_id and the bare id,
    /// unless the bare id itself begins with `<group>#` (`G#G#D`): importing
    /// keeps such an id as written, so it is written whole.
    public static func feature(for a: AreaDefinition) -> JSONValue { feature(for: a, circles: .points) }

    /// The same, a circle written as `circles` says: a Point with `radius_m`,
    /// or the polygon tracing it with `circle_lat`, `circle_lon` and
    /// `circle_radius_m` (`CircleAttributes`), which `area(from:)` reads back
    /// as the same circle. A circle no polygon can trace (across the
    /// antimeridian, near a pole) stays a Point.
    public static func feature(for a: AreaDefinition, circles: CircleForm) -> JSONValue {
        var props: [(String, JSONValue)] = []
        var id = a.areaId
        if let g = a.groupId {
            props.append(("group_id", .string(g)))
            let prefix = g + "#"
            if id.hasPrefix(prefix) && !id.dropFirst(prefix.count).hasPrefix(prefix) { id.removeFirst(prefix.count) }
        }
        props.append(("area_id", .string(id)))
        if let n = a.name { props.append(("name", .string(n))) }
        if let v = a.inAccuracyMaxM { props.append(("in_accuracy_max_m", .number(fmt(v)))) }
        props.append(("in_confirm_count", .number(String(a.inConfirmCount))))
        if let v = a.outAccuracyMaxM { props.append(("out_accuracy_max_m", .number(fmt(v)))) }
        props.append(("out_confirm_count", .number(String(a.outConfirmCount))))
        if let v = a.validFrom { props.append(("valid_from", .string(v.iso8601))) }
        if let v = a.validUntil { props.append(("valid_until", .string(v.iso8601))) }
        if let v = a.confidence { props.append(("confidence", .number(fmt(v)))) }
        if let v = a.timezone { props.append(("timezone", .string(v))) }
        let geometry: JSONValue
        switch a.shape {
        case .circle(let c):
            if circles == .polygons, let ring = CirclePolygon.ring(tracing: c) {
                props.append(contentsOf: CircleAttributes(c).properties)
                geometry = .object([("type", .string("Polygon")), ("coordinates", .array([.array(ring.points.map(position))]))])
            } else {
                props.append(("radius_m", .number(fmt(c.radiusM))))
                geometry = .object([("type", .string("Point")), ("coordinates", position(c.center))])
            }
        case .polygons(let polys):
            let rings = { (p: Polygon) in JSONValue.array(p.rings.map { .array($0.points.map(position)) }) }
            geometry = polys.count == 1
                ? .object([("type", .string("Polygon")), ("coordinates", rings(polys[0]))])
                : .object([("type", .string("MultiPolygon")), ("coordinates", .array(polys.map(rings)))])
        }
        props.append(contentsOf: a.properties)
        return .object([("type", .string("Feature")), ("properties", .object(props)), ("geometry", geometry)])
    }

    static func position(_ p: LonLat) -> JSONValue { .array([.number(fmt(p.lon)), .number(fmt(p.lat))]) }

    static func fmt(_ d: Double) -> String { JSONValue.numberText(d) }
}
