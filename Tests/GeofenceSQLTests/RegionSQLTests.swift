import CSQLite
import XCTest
import GeofenceCore
import GeofenceHost
@testable import GeofenceSQL

/// gf_nearest, gf_regions, gf_positioning and the settings behind them, on a
/// real catalog, checked against a brute-force scan of every area.
final class RegionSQLTests: DatabaseTestCase {
    /// 1,200 squares and circles scattered over 60 km around Tokyo, plus one far away.
    func scatteredCatalog() throws -> Connection {
        let db = try newCatalog()
        var seed: UInt64 = 7
        func rnd() -> Double { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Double(seed >> 11) / Double(1 << 53) }
        var features: [String] = []
        for i in 0..<1200 {
            let lon = 139.4 + rnd() * 0.7, lat = 35.4 + rnd() * 0.55
            if i % 3 == 0 {
                features.append(#"{"type":"Feature","properties":{"area_id":"C\#(i)","radius_m":\#(50 + rnd() * 800)},"geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]}}"#)
            } else {
                features.append(square("P\(i)", lon, lat, 0.001 + rnd() * 0.01,
                                       props: i % 7 == 0 ? #","valid_until":"2026-06-01T00:00:00Z""# : ""))
            }
        }
        features.append(square("FAR", -74.0, 40.7))
        _ = try AreaImporter(db).run(path: write("a.geojson", collection(features)), options: .init())
        return db
    }

    func bruteForce(_ db: Connection, _ lat: Double, _ lon: Double, _ n: Int, at: String? = nil) throws -> [String] {
        try db.query("""
            SELECT area_id FROM gf_areas
            WHERE ?4 IS NULL OR valid_until IS NULL OR valid_until >= ?4
            ORDER BY max(0, -gf_area_distance_m(area_id, ?1, ?2)), area_id LIMIT ?3
            """, [.real(lat), .real(lon), .integer(Int64(n)), at.sqlValue]).map { $0[0].string ?? "" }
    }

    func testNearestAgreesWithAScanOfEveryArea() throws {
        let db = try scatteredCatalog()
        var seed: UInt64 = 99
        func rnd() -> Double { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Double(seed >> 11) / Double(1 << 53) }
        var positions = (0..<25).map { _ in (35.3 + rnd() * 0.75, 139.3 + rnd() * 0.9) }
        positions += [(35.0, 135.0), (-33.9, 151.2), (40.7, -74.0), (89.9, 0)]   // far from the cluster, and at the FAR area
        for (lat, lon) in positions {
            for n in [1, 5, 40] {
                let got = try db.query("SELECT area_id FROM gf_nearest(?, ?, ?)", [.real(lat), .real(lon), .integer(Int64(n))]).map { $0[0].string ?? "" }
                XCTAssertEqual(got, try bruteForce(db, lat, lon, n), "n=\(n) at \(lat),\(lon)")
            }
        }
        // Only areas valid at the time: a seventh of the squares expired in June.
        let at = "2026-11-22T00:00:00.000000Z"
        let valid = try db.query("SELECT area_id FROM gf_nearest(35.7, 139.75, 30, '2026-11-22T09:00:00+09:00')").map { $0[0].string ?? "" }
        XCTAssertEqual(valid, try bruteForce(db, 35.7, 139.75, 30, at: at))
        // Rank, distance and ordering columns.
        let rows = try db.query("SELECT rank, distance_m FROM gf_nearest(35.7, 139.75, 10) ORDER BY rank")
        XCTAssertEqual(rows.map { $0[0].int64 }, (1...10).map { Int64($0) })
        let ds = rows.map { $0[1].double ?? -1 }
        XCTAssertEqual(ds, ds.sorted())
        // Joined per row of another table: one plan per outer row.
        let joined = try db.scalar("SELECT count(*) FROM (SELECT 35.5 AS lat UNION ALL SELECT 35.6 UNION ALL SELECT 35.7) f, gf_nearest(f.lat, 139.7, 4)")
        XCTAssertEqual(joined, .integer(12))
    }

    func testNearestErrorsNameTheArgument() throws {
        let db = try scatteredCatalog()
        let cases = [
            ("SELECT * FROM gf_nearest(35, 139)", "needs lat, lon and n"),
            ("SELECT * FROM gf_nearest(95, 139, 3)", "argument 1 (lat)"),
            ("SELECT * FROM gf_nearest(35, 'x', 3)", "argument 2 (lon)"),
            ("SELECT * FROM gf_nearest(35, 139, 0)", "argument 3 (n)"),
            ("SELECT * FROM gf_nearest(35, 139, 2.5)", "argument 3 (n)"),
            ("SELECT * FROM gf_nearest(35, 139, 3, '2026-01-01')", "argument 4 (at)"),
            ("SELECT gf_regions(35, 139, 3, -1)", "argument 4 (speed_mps)"),
            ("SELECT gf_positioning(1, 101)", "argument 2 (battery_pct)"),
            ("SELECT gf_accuracy_tier(-3)", "argument 1 (requested_m)"),
        ]
        for (sql, expected) in cases {
            XCTAssertThrowsError(try db.query(sql), sql) { e in XCTAssertTrue("\(e)".contains(expected), "\(sql): \(e)") }
        }
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM gf_nearest(35, 139, 10000)"), .integer(1201), "fewer rows when the catalog is smaller")
    }

    func testRegionPlanHoldsItsAreasAndStopsShortOfTheNext() throws {
        let db = try scatteredCatalog()
        try Settings(db).set("region_margin_m", "10")
        for (lat, lon) in [(35.7, 139.75), (35.55, 139.6), (35.9, 140.05)] {
            let json = try JSONReader.parse(try db.scalar("SELECT gf_regions(?, ?, 19)", [.real(lat), .real(lon)]).string ?? "")
            guard case .array(let regions)? = json["ios"]?["regions"], case .array(let areas)? = json["areas"] else { return XCTFail("\(json)") }
            XCTAssertEqual(regions.count, 19)
            let nearest = try db.query("SELECT area_id, distance_m FROM gf_nearest(?, ?, 20)", [.real(lat), .real(lon)])
            XCTAssertEqual(areas.map { $0["area_id"] }, nearest.prefix(19).map { .string($0[0].string ?? "") })
            let resync = json["ios"]?["resync"]?["radius"].flatMap { if case .number(let t) = $0 { Double(t) } else { nil } } ?? -1
            XCTAssertLessThan(resync, nearest[19][1].double ?? 0, "the re-sync region ends before the 20th area")
            XCTAssertGreaterThan(resync, (nearest[19][1].double ?? 0) - 1.1)
            // Each region circle holds its whole area: every vertex is within the radius.
            for r in regions {
                guard case .string(let id)? = r["identifier"], case .number(let rt)? = r["radius"],
                      case .number(let la)? = r["center"]?["latitude"], case .number(let lo)? = r["center"]?["longitude"] else { return XCTFail("\(r)") }
                let centre = LonLat(lon: Double(lo)!, lat: Double(la)!)
                let area = try XCTUnwrap(try AreaStore(db).get(id))
                switch area.shape {
                case .circle(let c):
                    XCTAssertGreaterThanOrEqual(Double(rt)!, max(100, c.radiusM + 10) - 0.01)
                case .polygons(let polys):
                    for p in polys[0].rings[0].points {
                        XCTAssertLessThanOrEqual(Geodesy.distance(centre, p) + 10, Double(rt)! + 1e-6, id)
                    }
                }
            }
        }
        // With a speed, the power-saving wake-up radius caps the re-sync region.
        let slow = try JSONReader.parse(try db.scalar("SELECT gf_regions(35.7, 139.75, 1, 0.5)").string ?? "")
        XCTAssertEqual(slow["android"]?["resync"]?["radius"], .number("100"))
    }

    func testPositioningSettingsAreValidatedTogether() throws {
        let db = try newCatalog()
        let s = Settings(db)
        XCTAssertEqual(try db.scalar("SELECT gf_positioning(NULL, NULL)").string,
                       #"{"service":"standard","power_saving":false,"accuracy_tier_m":-1,"distance_filter_m":-1,"reason":"standard positioning"}"#)
        XCTAssertThrowsError(try s.set("monitor_speed_low_mps", "6")) { e in XCTAssertEqual((e as? InputError)?.field, "monitor_speed_low_mps") }
        try s.set("monitor_speed_high_mps", "30")
        try s.set("monitor_speed_medium_mps", "20")
        try s.set("monitor_speed_low_mps", "6")
        XCTAssertThrowsError(try s.unset("monitor_speed_medium_mps"), "the default medium (5) would fall below low (6)")
        try s.set("power_saving", "on")
        XCTAssertEqual(try db.scalar("SELECT json_extract(gf_positioning(25, 50), '$.region_radius_m')"), .integer(2500))
        try s.unset("power_saving")
        XCTAssertEqual(try db.scalar("SELECT json_extract(gf_positioning(25, 10), '$.service')").string, "significant-change")
        XCTAssertThrowsError(try s.set("region_min_radius_m", "200000")) { e in XCTAssertTrue("\(e)".contains("region_max_radius_m"), "\(e)") }
        XCTAssertThrowsError(try s.unset("default_timezone"))
        XCTAssertEqual(try db.scalar("SELECT gf_accuracy_tier(999.9)"), .integer(100))
    }

    /// The virtual table keeps prepared statements; they must be gone before a
    /// host closes with plain sqlite3_close, which refuses while any is open.
    func testAHostClosingWithSqlite3CloseV1Succeeds() throws {
        _ = try scatteredCatalog()
        var handle: OpaquePointer?
        XCTAssertEqual(sqlite3_open(dir + "/t.db", &handle), SQLITE_OK)
        var stmt: OpaquePointer?
        XCTAssertEqual(sqlite3_prepare_v2(handle, "SELECT count(*) FROM gf_nearest(35.7, 139.7, 5)", -1, &stmt, nil), SQLITE_OK)
        XCTAssertEqual(sqlite3_step(stmt), SQLITE_ROW)
        XCTAssertEqual(sqlite3_column_int(stmt, 0), 5)
        sqlite3_finalize(stmt)
        XCTAssertEqual(sqlite3_prepare_v2(handle, "SELECT length(gf_regions(35.7, 139.7, 5)) > 100", -1, &stmt, nil), SQLITE_OK)
        XCTAssertEqual(sqlite3_step(stmt), SQLITE_ROW)
        sqlite3_finalize(stmt)
        // gf_check keeps its statements in the connection's gf_session between calls.
        XCTAssertEqual(sqlite3_prepare_v2(handle, "SELECT gf_check('p', '2026-01-01T00:00:00Z', 35.7, 139.7, 5)", -1, &stmt, nil), SQLITE_OK)
        XCTAssertEqual(sqlite3_step(stmt), SQLITE_ROW)
        sqlite3_finalize(stmt)
        XCTAssertEqual(sqlite3_close(handle), SQLITE_OK)
    }
}
