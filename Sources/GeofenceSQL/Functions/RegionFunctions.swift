import GeofenceCore

/// Device-side planning in SQL: region payloads for a phone and the
/// positioning decision of the seed's library (docs/sql.md, "Device regions").
///
///     SELECT gf_regions(35.6812, 139.7671, 2);              -- JSON: areas, ios, android
///     SELECT gf_regions(35.6812, 139.7671, 2, 12.5, '2026-11-22T09:00:00+09:00');
///     SELECT gf_positioning(3.0, 80);                       -- JSON: service, accuracy tier, ...
///     SELECT gf_accuracy_tier(50);                          -- 10
enum RegionFunctions {
    static func register(_ db: Connection) throws {
        let cache = ShapeCache(capacity: 4096)

        /// gf_regions(lat, lon, n [, speed_mps [, at]]): the plan of RegionPlan as
        /// JSON text. n from 1 to 10,000; speed >= 0 (m/s); at a time (only areas
        /// valid then, and expirations counted from it). NULL lat/lon/n gives NULL.
        try db.createFunction("gf_regions", arities: [3, 4, 5], argumentNames: ["lat", "lon", "n", "speed_mps", "at"],
                              flags: FunctionFlags.reading) { a in
            if (0..<3).contains(where: a.isNull) { return .null }
            let p = try GeometryFunctions.position(a, lat: 0, lon: 1)
            let n = try count(a, 2)
            var speed: Double?
            if a.count > 3, !a.isNull(3) {
                let v = try a.double(3)
                guard v >= 0 else { throw a.fail(3, "must be >= 0 m/s, got \(JSONValue.numberText(v))") }
                speed = v
            }
            var time: Timestamp?
            if a.count > 4, !a.isNull(4) {
                let text = try a.timeText(4)
                do { time = try Timestamp.parse(text) } catch { throw a.fail(4, "is not a time: \(error)") }
            }
            let db = a.connection
            // Statements live for this call only: a host may close with sqlite3_close (v1).
            let search = NearestAreas(db, cache: cache)
            defer { search.close() }
            return .text(try DeviceRegions.plan(db, search: search, at: p, count: n, speedMps: speed, time: time).json.serialized)
        }

        /// gf_positioning(speed_mps, battery_pct): what the seed's library would run
        /// with the stored positioning settings, as JSON text. Either may be NULL
        /// (unknown): no battery rule applies, speed counts as 0.
        try db.createFunction("gf_positioning", arities: [2], argumentNames: ["speed_mps", "battery_pct"],
                              flags: FunctionFlags.reading) { a in
            var speed: Double?, battery: Double?
            if !a.isNull(0) {
                let v = try a.double(0)
                guard v >= 0 else { throw a.fail(0, "must be >= 0 m/s, got \(JSONValue.numberText(v))") }
                speed = v
            }
            if !a.isNull(1) {
                let v = try a.double(1)
                guard (0...100).contains(v) else { throw a.fail(1, "must be a percentage from 0 to 100, got \(JSONValue.numberText(v))") }
                battery = v
            }
            let tables = try CatalogTables(a.connection)
            try Schema.refuseNewer(a.connection, in: tables)   // settings of a newer schema may mean what this build cannot know
            let settings = try Settings(a.connection, tables: tables).positioning()
            return .text(settings.decide(speedMps: speed, batteryPct: battery).json.serialized)
        }

        /// gf_accuracy_tier(requested_m): the seed's five levels, -1 (best), 10,
        /// 100, 1000, 3000. A negative request is an error, as in the seed.
        try db.createFunction("gf_accuracy_tier", arities: [1], argumentNames: ["requested_m"], flags: FunctionFlags.pure) { a in
            if a.isNull(0) { return .null }
            let v = try a.double(0)
            guard v >= 0 else { throw a.fail(0, "must be >= 0 metres, got \(JSONValue.numberText(v))") }
            return .integer(Int64(try PositioningSettings.accuracyTier(v)))
        }
    }

    static func count(_ a: Arguments, _ i: Int) throws -> Int {
        let n = try a.double(i)
        guard n == n.rounded(), n >= 1, n <= Double(NearestTable.maxCount) else {
            throw a.fail(i, "must be a whole number from 1 to \(NearestTable.maxCount), got \(JSONValue.numberText(n))")
        }
        return Int(n)
    }
}
