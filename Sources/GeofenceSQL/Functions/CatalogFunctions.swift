import GeofenceCore

/// Containment against a catalog area by id: the area's own accuracy limits
/// and confidence, else the database's default_confidence, unless the call
/// gives `p`. Unknown ids are an error (a typo should not read as "outside").
/// A catalog of a newer schema is refused (its areas may mean what this build
/// cannot know); an older one is read as it is, its areas' columns unchanged.
enum CatalogFunctions {
    static func register(_ db: Connection) throws {
        let cache = ShapeCache()
        let names = ["area_id", "lat", "lon", "accuracy_m", "p"]

        try db.createFunction("gf_area_contains", arities: [4, 5], argumentNames: names, flags: FunctionFlags.reading) { a in
            if (0..<a.count).contains(where: a.isNull) { return .null }
            let (shape, rule) = try lookup(a, cache)
            var r = rule
            if a.count > 4 { r.confidence = try GeometryFunctions.confidence(a, 4) }
            let p = try GeometryFunctions.position(a, lat: 1, lon: 2)
            return GeometryFunctions.verdictValue(r.verdict(shape, at: p, accuracy: try GeometryFunctions.accuracy(a, 3)))
        }

        try db.createFunction("gf_area_distance_m", arities: [3], argumentNames: names, flags: FunctionFlags.reading) { a in
            if (0..<3).contains(where: a.isNull) { return .null }
            return .real(try lookup(a, cache).0.signedDistance(try GeometryFunctions.position(a, lat: 1, lon: 2)))
        }

        try db.createFunction("gf_area_inside_probability", arities: [4], argumentNames: names, flags: FunctionFlags.reading) { a in
            if (0..<4).contains(where: a.isNull) { return .null }
            let shape = try lookup(a, cache).0
            return .real(InsideProbability.of(shape, at: try GeometryFunctions.position(a, lat: 1, lon: 2).canonical,
                                              accuracy: try GeometryFunctions.accuracy(a, 3)))
        }
    }

    /// An area's row as the functions read it: its shape's BLOB (a circle's
    /// polygon made by gf_circle), accuracy limits, confidence, and the
    /// catalog's schema version.
    static let rowSQL = """
        SELECT CASE kind WHEN 'circle' THEN gf_circle(center_lat, center_lon, radius_m) ELSE geom END,
               in_accuracy_max_m, out_accuracy_max_m,
               coalesce(confidence, (SELECT CAST(value AS REAL) FROM gf_settings WHERE key = 'default_confidence'), 0),
               (SELECT CAST(value AS INTEGER) FROM gf_meta WHERE key = 'schema_version')
        FROM gf_areas WHERE area_id = ?
        """

    /// The statement the connection's session keeps for `rowSQL` (preparing
    /// it was most of a call). It is stepping only when a call is made while
    /// another reads its row: `gf_areas` is then a view (or table) of the
    /// caller's that calls these functions, which would call each other
    /// without end until the stack overflowed; refused instead.
    /// A connection whose session cannot connect (a table of the user's
    /// named gf_session in main) prepares the statement per call, as before.
    static func rowStatement(_ a: Arguments) throws -> Statement {
        guard let session = try? Session.of(a.connection) else { return try a.connection.prepare(rowSQL) }
        let kept = try session.kept.get(rowSQL)
        guard !kept.isBusy else {
            throw FunctionError("\(a.function): called again while reading an area's row: the gf_areas, gf_settings or gf_meta "
                                + "this connection reads (a TEMP view or table of that name?) calls gf_area_contains, "
                                + "gf_area_distance_m or gf_area_inside_probability itself")
        }
        return kept
    }

    static func lookup(_ a: Arguments, _ cache: ShapeCache) throws -> (PreparedShape, VerdictRule) {
        let id = try a.text(0)
        let db = a.connection
        let s: Statement
        let found: Bool
        do {
            s = try rowStatement(a)
            try s.bind([.text(id)])
            found = try s.step()
        } catch let e as SQLiteError where e.isPlainError && (try? Schema.missingTables(db).contains("gf_areas")) == true {
            throw FunctionError("\(a.function): no geofence catalog in this database (no gf_areas table): create one with `geofence init`")
        }
        // Reset at once: a statement left on its row holds a read lock (the statement is reused).
        defer { s.reset() }
        guard found else {
            try Schema.refuseNewer(db)
            throw a.fail(0, "names no area in gf_areas: \(Echo.quoted(id))")
        }
        if let v = s.value(4).int64, v > Schema.currentVersion { throw Schema.newerError(Int(v), db) }
        guard s.isBlob(0) else { throw FunctionError("\(a.function): area \(Echo.quoted(id)) has no geometry") }
        let shape = try s.withBlob(0) { b in
            try cache.shape(for: b) { try GeometryFunctions.shape(from: b, a, 0) }
        }
        // Written past the catalog's constraints, a confidence outside [0, 1) would reach the arithmetic, which traps on it.
        let confidence = s.value(3).double ?? 0
        guard confidence >= 0 && confidence < 1 else {
            throw FunctionError("\(a.function): area \(Echo.quoted(id)): confidence \(confidence) is not in [0, 1) "
                                + "(its confidence column, else default_confidence in gf_settings, was written past the catalog's constraints)")
        }
        return (shape, VerdictRule(inAccuracyMax: s.value(1).double, outAccuracyMax: s.value(2).double, confidence: confidence))
    }
}
