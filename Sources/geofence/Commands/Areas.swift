import ArgumentParser
import GeofenceCore
import GeofenceSQL

struct Areas: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, show, add and remove areas.",
        subcommands: [List.self, Show.self, Add.self, Remove.self])

    static let columns = ["area_id", "group_id", "name", "kind", "shape", "in_accuracy_max_m", "in_confirm_count",
                          "out_accuracy_max_m", "out_confirm_count", "valid_from", "valid_until", "confidence", "timezone", "properties"]
    static let numeric: Set<String> = ["in_accuracy_max_m", "in_confirm_count", "out_accuracy_max_m", "out_confirm_count", "confidence"]

    static func row(_ a: AreaDefinition) -> [String?] {
        let kind: String, shape: String
        switch a.shape {
        case .circle(let c):
            kind = "circle"; shape = "r=\(fmt(c.radiusM))m @ \(c.center.lat),\(c.center.lon)"
        case .polygons(let p):
            kind = p.count == 1 ? "polygon" : "multipolygon"
            let holes = p.reduce(0) { $0 + $1.rings.count - 1 }
            let vertices = p.reduce(0) { $0 + $1.rings.reduce(0) { $0 + $1.points.count - 1 } }
            shape = "\(counted(p.count, "part")), \(counted(vertices, "vertex", plural: "vertices")), \(counted(holes, "hole"))"
        }
        return [a.areaId, a.groupId, a.name, kind, shape, a.inAccuracyMaxM.map(fmt), String(a.inConfirmCount),
                a.outAccuracyMaxM.map(fmt), String(a.outConfirmCount), a.validFrom?.iso8601, a.validUntil?.iso8601,
                a.confidence.map(fmt), a.timezone, a.properties.isEmpty ? nil : JSONValue.object(a.properties).serialized]
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List all areas, ordered by id.")
        @Argument(help: "The database file.") var db: String
        @Option(help: "Only areas of this group.") var group: String?
        @OptionGroup var output: OutputOptions
        func run() throws {
            try reporting {
                let areas = try AreaStore(openCatalog(db)).all(group: group)
                output.print(columns: Areas.columns, rows: areas.map(Areas.row), numeric: Areas.numeric)
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one area, with its geometry as a GeoJSON feature.")
        @Argument(help: "The database file.") var db: String
        @Argument(help: "The area id.") var id: String
        @Flag(help: "Print the area as a GeoJSON Feature.") var geojson = false
        @OptionGroup var output: OutputOptions
        func run() throws {
            try reporting {
                guard let a = try AreaStore(openCatalog(db)).get(id) else { throw InputError("no such area", id: id) }
                if geojson { print(GeoJSONArea.feature(for: a).serialized); return }
                output.print(columns: Areas.columns, rows: [Areas.row(a)], numeric: Areas.numeric)
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add one area: a circle, or a GeoJSON Polygon/MultiPolygon geometry.",
            discussion: """
                Example: geofence areas add fences.db --id station --circle 35.681,139.767,300 --in-confirm-count 2

                --circle takes latitude first, as a map app shows a position; --circle-lonlat takes \
                longitude first, as GeoJSON, WKT and GIS tools write it. Both numbers of New York are \
                valid latitudes, so no check catches a swapped pair: the command prints the centre \
                it made in words (centre 40.7128° N, 74.006° W) to read back.
                """)
        @Argument(help: "The database file.") var db: String
        @Option(help: "The area id (unique).") var id: String
        @Option(parsing: .unconditional, help: "A circle: LAT,LON,RADIUS_M (latitude first).") var circle: String?
        @Option(parsing: .unconditional, help: "A circle: LON,LAT,RADIUS_M (longitude first, as GeoJSON and GIS tools write a point).")
        var circleLonlat: String?
        @Option(help: "A GeoJSON geometry object (Polygon or MultiPolygon), as text.") var geometry: String?
        @Option(help: "Group id: the area's id becomes <group>#<id>.") var group: String?
        @Option(help: "A display name.") var name: String?
        @Option(parsing: .unconditional, help: "Largest accuracy (m) that can count towards entering; default: no limit.", transform: decimalOption) var inAccuracyMax: Double?
        @Option(parsing: .unconditional, help: "Consecutive inside fixes that confirm an entry.") var inConfirmCount: Int = 1
        @Option(parsing: .unconditional, help: "Largest accuracy (m) that can count towards exiting; default: no limit.", transform: decimalOption) var outAccuracyMax: Double?
        @Option(parsing: .unconditional, help: "Consecutive outside fixes that confirm an exit.") var outConfirmCount: Int = 1
        @Option(parsing: .unconditional, help: "Start of the validity period (ISO 8601 with an offset, or Unix seconds), included.") var validFrom: String?
        @Option(parsing: .unconditional, help: "End of the validity period (ISO 8601 with an offset, or Unix seconds), included.") var validUntil: String?
        @Option(parsing: .unconditional, help: "CEP confidence p in [0, 1) for this area; default: the database's.", transform: decimalOption) var confidence: Double?
        @Option(help: "IANA time zone for this area's conditions.") var timezone: String?
        @Flag(help: "Replace an existing area with this id.") var upsert = false
        @Flag(help: "Repair a self-intersecting polygon with MakeValid.") var makeValid = false

        /// The option behind each property of the feature this command builds.
        static let options = ["area_id": "--id", "name": "--name", "in_accuracy_max_m": "--in-accuracy-max",
                              "in_confirm_count": "--in-confirm-count", "out_accuracy_max_m": "--out-accuracy-max",
                              "out_confirm_count": "--out-confirm-count", "valid_from": "--valid-from", "valid_until": "--valid-until",
                              "confidence": "--confidence", "timezone": "--timezone"]

        func validate() throws {
            if group == "" { throw ValidationError("--group needs a group id (an empty one would make the id #\(id))") }
        }

        func run() throws {
            try reporting {
                let geometryValue: JSONValue
                var props: [(String, JSONValue)] = [("area_id", .string(id))]
                let circleOption = circle.map { ($0, "--circle", false) } ?? circleLonlat.map { ($0, "--circle-lonlat", true) }
                switch (circleOption, geometry) {
                case (let (c, option, lonFirst)?, nil) where circle == nil || circleLonlat == nil:
                    let form = lonFirst ? "LON,LAT,RADIUS_M" : "LAT,LON,RADIUS_M"
                    let parts = c.split(separator: ",", omittingEmptySubsequences: false).map { NumberText.double(String($0.trimmingCharacters(in: " "))) }
                    guard parts.count == 3, let first = parts[0], let second = parts[1], let r = parts[2] else {
                        throw InputError("expected \(form), got \(Echo.quoted(c))", field: option)
                    }
                    let (lat, lon) = lonFirst ? (second, first) : (first, second)
                    // Said of the option as the user wrote it, not of the GeoJSON made from it.
                    guard (-90...90).contains(lat) else { throw InputError("LAT must be a latitude in [-90, 90], got \(lat)", field: option) }
                    guard (-180...180).contains(lon) else { throw InputError("LON must be a longitude in [-180, 180], got \(lon)", field: option) }
                    geometryValue = .object([("type", .string("Point")), ("coordinates", .array([JSONValue.number(lon), JSONValue.number(lat)]))])
                    props.append(("radius_m", JSONValue.number(r)))
                case (nil, let g?):
                    do { geometryValue = try JSONReader.parse(g) } catch {
                        throw InputError("not JSON: \(error)", field: "--geometry")
                    }
                default:
                    throw InputError("give exactly one of --circle, --circle-lonlat and --geometry", field: "--circle/--circle-lonlat/--geometry")
                }
                if let name { props.append(("name", .string(name))) }
                if let v = inAccuracyMax { props.append(("in_accuracy_max_m", JSONValue.number(v))) }
                props.append(("in_confirm_count", .number(String(inConfirmCount))))
                if let v = outAccuracyMax { props.append(("out_accuracy_max_m", JSONValue.number(v))) }
                props.append(("out_confirm_count", .number(String(outConfirmCount))))
                if let v = validFrom { props.append(("valid_from", .string(v))) }
                if let v = validUntil { props.append(("valid_until", .string(v))) }
                if let v = confidence { props.append(("confidence", JSONValue.number(v))) }
                if let v = timezone { props.append(("timezone", .string(v))) }
                let feature = JSONValue.object([("type", .string("Feature")), ("properties", .object(props)), ("geometry", geometryValue)])
                let conn = try openCatalog(db)
                var area: AreaDefinition
                do { area = try GeoJSONArea.area(from: feature, group: group) } catch var e as InputError {
                    // The feature is this command's own: its errors name the option the value came from.
                    if e.field == "properties.radius_m", let (_, option, _) = circleOption {
                        e.message = "RADIUS_M " + e.message
                        e.field = option
                    } else if let field = e.field, field.hasPrefix("properties."), let option = Self.options[String(field.dropFirst(11))] {
                        e.field = option
                    }
                    throw e
                }
                try conn.transaction {
                    let store = AreaStore(conn)
                    if case .repaired(let reason) = try store.checkValidity(&area, makeValid: makeValid) {
                        warn("repaired: \(reason)")
                    }
                    try store.insert(area, upsert: upsert)
                    try store.requireDistinctIds()
                }
                // The centre in words: a pair given in the other order shows at once (74.006° S is not New York).
                if case .circle(let c) = area.shape {
                    print("added area \(area.areaId): circle, centre \(inWords(c.center)), radius \(fmt(c.radiusM)) m")
                } else {
                    print("added area \(area.areaId)")
                }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an area and its conditions.")
        @Argument(help: "The database file.") var db: String
        @Argument(help: "The area ids.") var ids: [String]
        func run() throws {
            try reporting {
                let conn = try openCatalog(db)
                try conn.transaction {
                    let store = AreaStore(conn)
                    for id in ids where try !store.remove(id) { throw InputError("no such area (nothing removed)", id: id) }
                }
                print("removed \(counted(ids.count, "area")) and \(ids.count == 1 ? "its" : "their") conditions")
            }
        }
    }
}

func fmt(_ d: Double) -> String { JSONValue.numberText(d) }

/// A position in words, hemispheres named: `40.7128° N, 74.006° W`
/// (degrees to 6 decimals, about 0.1 m, trailing zeros dropped).
func inWords(_ p: LonLat) -> String {
    func degrees(_ v: Double, _ positive: String, _ negative: String) -> String {
        let millionths = Int((abs(v) * 1_000_000).rounded())
        var fraction = String(millionths % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let digits = String(millionths / 1_000_000) + (fraction.isEmpty ? "" : "." + fraction)
        return "\(digits)° \(millionths == 0 ? "" : v < 0 ? negative : positive)".trimmingEdgeSpaces()
    }
    return degrees(p.lat, "N", "S") + ", " + degrees(p.lon, "E", "W")
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        var s = self
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}
