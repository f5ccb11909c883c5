import GeofenceCore

/// Areas in gf_areas: write, read, remove. Every statement binds its values.
public final class AreaStore {
    let db: Connection
    private let statements: StatementCache
    /// Where the reads find gf_areas (`CatalogTables`).
    let tables: CatalogTables

    public convenience init(_ db: Connection) { self.init(db, tables: .unqualified) }
    init(_ db: Connection, tables: CatalogTables) { self.db = db; self.tables = tables; statements = StatementCache(db) }

    /// gf_areas' columns as the engine reads and writes them, in order.
    enum Column: Int, NamedColumns {
        case area_id, group_id, name, kind, center_lat, center_lon, radius_m, in_accuracy_max_m, in_confirm_count,
             out_accuracy_max_m, out_confirm_count, valid_from, valid_until, confidence, timezone, properties, geom
    }
    static let columns = Column.list
    /// The columns as judgement reads them: the properties as NULL. No rule
    /// reads them, and parsing their JSON was most of reading a row besides
    /// its geometry; every door that judges reads them so (none fails, nor
    /// passes, on what they hold).
    static let judgedColumns = Column.list(reading: [.properties: "NULL"])

    /// With `implied`, the row's values are followed by the id of its
    /// implied IN condition (`ImpliedConditions`); an upsert that replaces
    /// an area keeps the conditions it has, so it never sets that column.
    static func insertSQL(upsert: Bool, implied: Bool) -> String {
        var sql = implied ? "INSERT INTO gf_areas (\(columns), \(ImpliedConditions.column)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
                          : "INSERT INTO gf_areas (\(columns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        if upsert {
            let set = Column.allCases.filter { $0 != .area_id }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            sql += " ON CONFLICT(area_id) DO UPDATE SET \(set)"
        }
        return sql
    }

    public enum Repair { case none, repaired(reason: String) }

    /// Checks the polygon with GEOS (through SpatiaLite). Invalid: with
    /// `makeValid`, returns the repaired area; otherwise throws with GEOS's reason.
    public func checkValidity(_ area: inout AreaDefinition, makeValid: Bool) throws -> Repair {
        guard case .polygons(let polys) = area.shape else { return .none }
        return try checkValidity(&area, geometry: SpatiaLiteBlob.encodeMultiPolygon(polys), makeValid: makeValid)
    }

    /// The same, with the polygons' BLOB already encoded (by an import's parsing thread).
    func checkValidity(_ area: inout AreaDefinition, geometry blob: [UInt8], makeValid: Bool) throws -> Repair {
        guard case .polygons = area.shape else { return .none }
        let check = try statements.get("SELECT ST_IsValidReason(?1)")
        try check.bind([.blob(blob)])
        _ = try check.step()
        // ST_IsValidReason rather than ST_IsValid: the latter has GEOS print a
        // warning on stderr for every invalid polygon.
        let reason = check.value(0).string ?? "invalid geometry"
        let valid = reason == "Valid Geometry"
        guard !valid else { return .none }
        guard makeValid else {
            throw InputError("invalid polygon: \(reason) (use --make-valid to repair it with SpatiaLite's MakeValid)", field: "geometry")
        }
        let repair = try statements.get("SELECT ST_CollectionExtract(MakeValid(?1), 3)")
        try repair.bind([.blob(blob)])
        // MakeValid prints GEOS's reason again as an "RTTOPO warning" on
        // standard error; the command reports the repair in its own words.
        _ = try SilencedStandardError.run { try repair.step() }
        guard case .blob(let fixed) = repair.value(0) else {
            throw InputError("invalid polygon (\(reason)) and MakeValid left no polygonal part", field: "geometry")
        }
        let areal = try fixed.withUnsafeBytes { try SpatiaLiteBlob.decodeAreal($0) }
        area.shape = .polygons(areal.polygons)
        return .repaired(reason: reason)
    }

    /// Where an area_id that is taken can have come from, as a refusal says it:
    /// one area added on its own meets only the catalog; an import may also
    /// meet a feature earlier in its own file.
    public enum EarlierArea { case inCatalog, inCatalogOrFile }

    public func insert(_ a: AreaDefinition, upsert: Bool = false, earlier: EarlierArea = .inCatalog) throws {
        try insert(Row(a), upsert: upsert, earlier: earlier)
    }

    /// An area as the values of its gf_areas row (BLOB encoded, properties
    /// serialized): computed apart from the connection, on an import's
    /// parsing thread.
    public struct Row: @unchecked Sendable {
        let areaId: String
        let values: [SQLiteValue]
        var geometry: [UInt8] { if case .blob(let b) = values.last { b } else { [] } }
        public init(_ a: AreaDefinition) { areaId = a.areaId; values = AreaStore.values(a) }
    }

    /// `impliedConditions`: the id of the area's implied IN condition (its
    /// OUT is the next), for an area new to the catalog.
    public func insert(_ row: Row, upsert: Bool = false, earlier: EarlierArea = .inCatalog, impliedConditions: Int64? = nil) throws {
        let s = try statements.get(Self.insertSQL(upsert: upsert, implied: impliedConditions != nil))
        do {
            try s.run(impliedConditions.map { row.values + [.integer($0)] } ?? row.values)
        } catch let e as SQLiteError where e.isUniqueViolation && (try? hasArea(row.areaId)) == true {
            let which = earlier == .inCatalog ? "the catalog already has an area with this id"
                                              : "an area with this id already exists, in the catalog or earlier in this file"
            throw InputError("duplicate area_id: \(which) (use --upsert to replace it)", id: row.areaId, field: "area_id")
        }
    }

    /// Whether the catalog holds an area of this id (which a refused insert then collided with).
    private func hasArea(_ id: String) throws -> Bool {
        try db.scalar("SELECT EXISTS (SELECT 1 FROM gf_areas WHERE area_id = ?)", [.text(id)]).int64 == 1
    }

    static func values(_ a: AreaDefinition) -> [SQLiteValue] {
        var kind = "polygon"
        var lat: Double?, lon: Double?, radius: Double?
        let geom: [UInt8]
        switch a.shape {
        case .polygons(let p):
            geom = SpatiaLiteBlob.encodeMultiPolygon(p)
        case .circle(let c):
            kind = "circle"; lat = c.center.lat; lon = c.center.lon; radius = c.radiusM
            geom = CircleEnvelope.blob(c)
        }
        return [
            .text(a.areaId), a.groupId.sqlValue, a.name.sqlValue, .text(kind), lat.sqlValue, lon.sqlValue, radius.sqlValue,
            a.inAccuracyMaxM.sqlValue, .integer(Int64(a.inConfirmCount)), a.outAccuracyMaxM.sqlValue, .integer(Int64(a.outConfirmCount)),
            a.validFrom.map { .text($0.storageText) } ?? .null, a.validUntil.map { .text($0.storageText) } ?? .null, a.confidence.sqlValue, a.timezone.sqlValue,
            .text(JSONValue.object(a.properties).serialized), .blob(geom),
        ]
    }

    /// Every area (of one group), by id. An id that is no UTF-8 text is the
    /// catalog's error naming its row: listed or exported with its bytes
    /// repaired, it would come back as another id.
    public func all(group: String? = nil) throws -> [AreaDefinition] {
        let s = try db.prepare("SELECT \(Self.columns), id FROM gf_areas WHERE ?1 IS NULL OR group_id = ?1 ORDER BY area_id")
        try s.bind([group.sqlValue])
        let rowId = Column.allCases.count
        var out: [AreaDefinition] = []
        while try s.step() {
            _ = try CatalogError.areaId(s, Column.area_id.rawValue, row: s.value(rowId).int64)
            out.append(try Self.area(Array(s.row.prefix(rowId))))
        }
        return out
    }

    /// Whether an area with this id is in the catalog.
    public func exists(_ id: String) throws -> Bool {
        let s = try statements.get("SELECT EXISTS (SELECT 1 FROM \(tables.areas) WHERE area_id = ?)")
        try s.bind([.text(id)])
        defer { s.reset() }
        return try s.step() && s.value(0).int64 == 1
    }

    public func get(_ id: String) throws -> AreaDefinition? { try getWithImplied(id)?.area }

    /// The statements reading one area by id (all its columns; as judgement
    /// reads them), prepared once and kept: a gf_check session reads an area
    /// the first time it meets it, and writing the statement's text and
    /// hashing it to find the statement was a sixth of that read.
    private var byId: [Statement?] = [nil, nil]

    /// The area and the id of its implied IN condition (`ImpliedConditions`),
    /// read in one row; `judging`: as judgement reads it (`judgedColumns`).
    func getWithImplied(_ id: String, judging: Bool = false) throws -> (area: AreaDefinition, implied: Int64?)? {
        let which = judging ? 1 : 0
        let s = try byId[which] ?? db.prepare("SELECT \(judging ? Self.judgedColumns : Self.columns), \(ImpliedConditions.column) "
                                               + "FROM \(tables.areas) WHERE area_id = ?")
        byId[which] = s
        try s.bind(text: id, at: 1)
        // Reset at once: a statement left on its row holds a read lock (the statement is reused).
        defer { s.reset() }
        guard try s.step() else { return nil }
        let row = s.row
        return (try Self.area(row), try ImpliedConditions.first(row[Column.allCases.count], area: id))
    }

    public var count: Int { get throws { Int(try db.scalar("SELECT count(*) FROM \(tables.areas)").int64 ?? 0) } }

    /// Removes every area and condition (the implied ones go with their
    /// areas' rows), and every subject's stays with them
    /// (behaviour: an area that goes away takes its stays). The stays go
    /// first, from every record at once: the removal trigger of each area
    /// (gf_areas_remove_inside) then finds nothing left to rewrite, and no
    /// stay of an area re-imported under the same id comes back.
    public func removeAll() throws {
        try db.execute("""
            UPDATE gf_subject_state SET record = json_set(record, '$.stays', json('[]')) WHERE json_array_length(record, '$.stays') > 0;
            DELETE FROM gf_inside;
            DELETE FROM gf_condition_rows;
            DELETE FROM gf_areas;
            """)
    }

    /// Removes the area and (by trigger) its conditions; false if there was none.
    @discardableResult
    public func remove(_ id: String) throws -> Bool {
        try db.query("DELETE FROM gf_areas WHERE area_id = ?", [.text(id)])
        return db.changes > 0
    }

    /// A stored validity time, or its error naming the area and the column
    /// (a value written past the importer, by SQL).
    private static func validity(_ text: String?, of id: String, column: String) throws -> Timestamp? {
        guard let text else { return nil }
        do { return try Timestamp.parse(text) } catch {
            throw InputError("\(error)", id: id, field: column)
        }
    }

    /// An area from a row of `Column`s. `polygons`: the geom column already
    /// decoded (it is then not read), as `AreaPreparation`'s scan does.
    /// An area's properties as stored: a JSON object (`{}` for none) as
    /// `import` writes it. Any other value, written into gf_areas by SQL (or,
    /// a member named twice or a NUL, by an older version's import), is
    /// the catalog's error naming the area where a command shows the
    /// properties (judgement reads none: `judgedColumns`): read as none,
    /// they would be lost by the next `export`; read as they are (a member
    /// named twice, or named as an area field such as `area_id`), `export`
    /// would write a file `import` refuses.
    private static func properties(_ value: SQLiteValue, of id: String) throws -> [(String, JSONValue)] {
        let what: String
        switch value {
        case .null: return []
        case .text(let text):
            do {
                switch try JSONReader.parse(text) {
                case .object(let members):
                    guard let field = members.first(where: { AreaDefinition.fieldNames.contains($0.0) })?.0 else { return members }
                    what = "a JSON object with a member \(Echo.quoted(field)), a field of the area itself"
                default: what = "JSON that is not an object"
                }
            } catch {
                what = "not JSON as import writes it (\(error))"
            }
        case .integer, .real: what = "a number"
        case .blob: what = "a BLOB"
        }
        throw CatalogError("area \(Echo.quoted(id)) has properties that are \(what), written into gf_areas by SQL or an older version: "
                           + "set them to a JSON object in SQL, '{}' for none")
    }

    static func area(_ values: [SQLiteValue], polygons: [Polygon]? = nil) throws -> AreaDefinition {
        let r = NamedRow<Column>(values)
        guard let id = r[.area_id].string else { throw CatalogError.unnamedArea(row: nil, r[.area_id]) }
        // As `import` refuses it: a NUL would be written into the subject's
        // record, which no reader (this engine's included) takes back.
        guard !id.utf8.contains(0) else {
            throw CatalogError("area \(Echo.quoted(id)) has an area_id holding a NUL character (U+0000), which no area_id may hold "
                               + "(written into gf_areas by SQL; `geofence import` refuses it): rename or delete it in SQL, "
                               + "e.g. DELETE FROM gf_areas WHERE hex(area_id) = '\(Echo.hex(id.utf8))'")
        }
        let shape: Shape
        if let polygons {
            shape = .polygons(polygons)
        } else if r[.kind].string == "circle" {
            shape = .circle(Circle(center: LonLat(lon: r[.center_lon].double ?? 0, lat: r[.center_lat].double ?? 0), radiusM: r[.radius_m].double ?? 0))
        } else {
            guard case .blob(let b) = r[.geom] else { throw CatalogError("area \(Echo.quoted(id)) has no geometry") }
            do {
                shape = .polygons(try b.withUnsafeBytes { try SpatiaLiteBlob.decodeAreal($0) }.polygons)
            } catch {
                throw CatalogError("area \(Echo.quoted(id)): geometry cannot be read: \(error)")
            }
        }
        var a = AreaDefinition(areaId: id, shape: shape)
        a.groupId = r[.group_id].string
        a.name = r[.name].string
        a.inAccuracyMaxM = r[.in_accuracy_max_m].double
        a.inConfirmCount = Int(r[.in_confirm_count].int64 ?? 1)
        a.outAccuracyMaxM = r[.out_accuracy_max_m].double
        a.outConfirmCount = Int(r[.out_confirm_count].int64 ?? 1)
        do {
            a.validFrom = try validity(r[.valid_from].text(field: "valid_from"), of: id, column: "valid_from")
            a.validUntil = try validity(r[.valid_until].text(field: "valid_until"), of: id, column: "valid_until")
            a.timezone = try r[.timezone].text(field: "timezone")
        } catch let e as InputError { throw e.located(id: id) }
        a.confidence = r[.confidence].double
        a.properties = try properties(r[.properties], of: id)
        do { try a.validateValues() } catch let e as InputError { throw InputError(e.message, id: id, field: e.field) }
        return a
    }

    /// Fails when two area ids of the catalog differ only in Unicode
    /// normalization (`café` composed and decomposed): judgement refuses
    /// such a catalog, and a single check could take one for the other, so
    /// an import or `areas add` that would make one is refused instead.
    /// Only ids with a non-ASCII character can be such a pair; they are
    /// read from the id index, not the areas' rows.
    public func requireDistinctIds() throws {
        let s = try db.prepare("SELECT area_id FROM gf_areas WHERE length(area_id) <> length(CAST(area_id AS BLOB))")
        // Swift's String equality and hashing are canonical equivalence: a
        // second id equal to a first with other bytes is such a pair.
        var seen: [String: String] = [:]
        while try s.step() {
            guard let id = s.value(0).string else { continue }
            if let first = seen[id], !first.hasSameUTF8(as: id) { try CandidateGrid.requireDistinctIds((first, id)) }
            seen[id] = id
        }
    }
}
