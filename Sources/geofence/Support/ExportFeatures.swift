import GeofenceCore

/// The features `export` writes for a format: each area's GeoJSON feature,
/// its circle as a point or a traced polygon (`CircleForm`), with what the
/// format needs of them.
///
/// - A layer that holds one geometry type (Shapefile, FlatGeobuf) takes
///   polygons and multipolygons together, promoted to multipolygons only when
///   both occur (importing gives the same areas either way: a multipolygon of
///   one polygon is that polygon); a circle written as a point there is
///   refused, naming the area, rather than left for ogr2ogr to fail on.
/// - A Shapefile keeps a number to 15 decimal places, which is not every
///   double; there the circle attributes, machine-made to the last digit, are
///   written as text holding the exact number, which import reads as that
///   number.
struct ExportFeatures {
    /// The features, in catalog order.
    let features: [JSONValue]
    /// Whether polygons must be written as multipolygons (both occur in a one-type layer).
    let promoteToMulti: Bool

    init(_ areas: [AreaDefinition], circles: CircleForm, format: ExportFormat) throws {
        var features: [JSONValue] = []
        features.reserveCapacity(areas.count)
        var types = Set<String>()
        var firstPoint: String?
        for a in areas {
            if format == .shapefile { try Self.fitsAShapefile(a) }
            var f = GeoJSONArea.feature(for: a, circles: circles)
            let type = f["geometry"]?["type"]?.plainText ?? ""
            if type == "Point" && firstPoint == nil { firstPoint = a.areaId }
            types.insert(type)
            if format == .shapefile { f = Self.circleAttributesAsText(f) }
            features.append(f)
        }
        if format.holdsOneGeometryType, let id = firstPoint, types.count > 1 {
            let why = circles == .points ? "--circles points writes circles as points"
                                         : "it crosses the antimeridian or nears a pole, where no polygon in longitude/latitude traces it"
            throw InputError("area \(Echo.quoted(id)) is a circle written as a point (\(why)), and a layer in \(format.rawValue) holds one "
                             + "geometry type, here polygons: export it as a format that holds both, such as GPKG"
                             + (circles == .points ? ", or leave --circles polygons (the default)" : ""), field: "--format")
        }
        self.features = features
        promoteToMulti = format.holdsOneGeometryType && types.contains("Polygon") && types.contains("MultiPolygon")
    }

    /// Refuses an area a Shapefile would change without a word: an id or a
    /// text longer than a .dbf field's 254 bytes (cut, the id then another
    /// area's or none), a free property whose name a .dbf cuts to 10 bytes
    /// (read back under another name). Export promises that importing the
    /// file gives the same catalog; where a Shapefile cannot, it says which
    /// area and what to use instead.
    static func fitsAShapefile(_ a: AreaDefinition) throws {
        let instead = "export it as GPKG or FlatGeobuf, which keep it"
        if a.areaId.utf8.count > 254 {
            throw InputError("area_id is \(a.areaId.utf8.count) bytes, and a Shapefile keeps 254 of a text: \(instead)", id: a.areaId, field: "--format")
        }
        if let long = a.properties.first(where: { $0.0.utf8.count > 10 }) {
            throw InputError("its property \(Echo.quoted(long.0)) has a name longer than a Shapefile's 10 bytes, "
                             + "so it would come back under another: \(instead)", id: a.areaId, field: "--format")
        }
        if let long = a.properties.first(where: { if case .string(let t) = $0.1 { t.utf8.count > 254 } else { false } }) {
            throw InputError("its property \(Echo.quoted(long.0)) holds more than a Shapefile's 254 bytes of text: \(instead)",
                             id: a.areaId, field: "--format")
        }
    }

    /// `feature` with its circle attributes' numbers written as text.
    static func circleAttributesAsText(_ feature: JSONValue) -> JSONValue {
        guard case .object(var members) = feature, let k = members.firstIndex(where: { $0.0 == "properties" }),
              case .object(var props) = members[k].1 else { return feature }
        for i in props.indices where CircleAttributes.names.contains(props[i].0) {
            if case .number(let n) = props[i].1 { props[i].1 = .string(n) }
        }
        members[k].1 = .object(props)
        return .object(members)
    }

    /// A FeatureCollection of them, with the set's `updated_at` when there is one.
    func collection(updatedAt: String?) -> String {
        var text = "{\"type\":\"FeatureCollection\""
        if let t = updatedAt { text += ",\"updated_at\":"; JSONValue.writeString(t, to: &text) }
        text += ",\"features\":[\n" + features.map { $0.serialized }.joined(separator: ",\n") + "\n]}\n"
        return text
    }
}
