import GeofenceCore

/// Questions asked of the catalog through its SQL surface.
public enum AreaQueries {
    public struct Located {
        public var areaId: String
        public var name: String?
        public var verdict: String
        public var distanceM: Double
        public var probability: Double
    }

    /// The SQL behind `geofence locate`: R*Tree candidates whose box meets the
    /// fix's error circle (a degree box a little larger than k·accuracy: ?4
    /// degrees of latitude, ?6 of longitude, which wraps across ±180: the
    /// second and third scans find boxes on the other side of the
    /// antimeridian, and nothing elsewhere), then the verdict per area. A user
    /// can run the same statement in the shell.
    public static let locateSQL = """
        SELECT a.area_id, a.name,
               CASE ?5 IS NULL WHEN 1 THEN gf_area_contains(a.area_id, ?1, ?2, ?3)
                               ELSE gf_area_contains(a.area_id, ?1, ?2, ?3, ?5) END AS verdict,
               gf_area_distance_m(a.area_id, ?1, ?2) AS distance_m,
               gf_area_inside_probability(a.area_id, ?1, ?2, ?3) AS inside_probability
        \(candidates)
        ORDER BY a.area_id
        """

    /// The candidate rows, as `locateSQL` and its check of their ids read them.
    static let candidates = """
        FROM gf_areas AS a
        WHERE a.id IN (SELECT pkid FROM idx_gf_areas_geom
                       WHERE xmax >= ?2 - ?6 AND xmin <= ?2 + ?6 AND ymax >= ?1 - ?4 AND ymin <= ?1 + ?4
                       UNION ALL
                       SELECT pkid FROM idx_gf_areas_geom
                       WHERE xmin <= ?2 + ?6 - 360 AND ymax >= ?1 - ?4 AND ymin <= ?1 + ?4
                       UNION ALL
                       SELECT pkid FROM idx_gf_areas_geom
                       WHERE xmax >= ?2 - ?6 + 360 AND ymax >= ?1 - ?4 AND ymin <= ?1 + ?4)
        """

    public static func locate(_ db: Connection, lat: Double, lon: Double, accuracy: Double, confidence: Double?) throws -> [Located] {
        // Degrees that surely cover 3·accuracy (CEP99 is 2.01×). Longitude
        // degrees shrink towards the poles: the window's longitude half-width
        // is taken where the window comes nearest a pole, and a window that
        // reaches a pole takes every longitude (they all meet there).
        let latPad = 3 * accuracy / 110_000 + 1e-9  // a degree of latitude is 110.57-111.69 km
        let nearest = abs(lat) + latPad
        let lonPad = nearest >= 89.999 ? 360 : min(360, 3 * accuracy / WGS84.metresPerDegree(atLat: nearest).lon + 1e-9)
        let parameters: [SQLiteValue] = [.real(lat), .real(lon), .real(accuracy), .real(latPad), confidence.sqlValue, .real(lonPad)]
        // The candidates' ids first: one that is no UTF-8 text is named by its
        // row, as every other door names it, where the SQL functions could only
        // name their argument.
        let ids = try db.prepare("SELECT a.area_id, a.id \(candidates)")
        try ids.bind(parameters)
        while try ids.step() { _ = try CatalogError.areaId(ids, 0, row: ids.value(1).int64) }
        return try db.query(locateSQL, parameters).map { r in
            let verdict: String
            switch r[2] { case .integer(1): verdict = "inside"; case .integer(0): verdict = "outside"; default: verdict = "undecided" }
            return Located(areaId: r[0].string ?? "", name: r[1].string, verdict: verdict,
                           distanceM: r[3].double ?? 0, probability: r[4].double ?? 0)
        }
    }
}
