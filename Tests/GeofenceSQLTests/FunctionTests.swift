import XCTest
import GeofenceCore
import GeofenceHost
@testable import GeofenceSQL

final class FunctionTests: DatabaseTestCase {
    func testNullInNullOutAndClearErrors() throws {
        let db = try Database.open(":memory:")
        XCTAssertEqual(try db.scalar("SELECT gf_contains(NULL, 1, 2, 3)"), .null)
        XCTAssertEqual(try db.scalar("SELECT gf_distance_m(gf_circle(35, 139, 100), NULL, 139)"), .null)
        let cases = [
            ("SELECT gf_contains(x'00', 35, 139, 5)", "argument 1 (area)"),
            ("SELECT gf_contains('text', 35, 139, 5)", "argument 1 (area) must be a geometry BLOB"),
            ("SELECT gf_contains(gf_circle(35, 139, 100), 91, 139, 5)", "argument 2 (lat)"),
            ("SELECT gf_contains(gf_circle(35, 139, 100), 35, 181, 5)", "argument 3 (lon)"),
            ("SELECT gf_contains(gf_circle(35, 139, 100), 35, 139, -1)", "argument 4 (accuracy_m)"),
            ("SELECT gf_contains(gf_circle(35, 139, 100), 35, 139, 5, 1.0)", "argument 5 (p)"),
            ("SELECT gf_cep_factor(-0.1)", "gf_cep_factor: argument 1 (p)"),
            ("SELECT gf_contains(ST_GeomFromText('POINT(1 2)', 4326), 35, 139, 5)", "not a Polygon or MultiPolygon"),
            ("SELECT gf_contains(ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))', 3857), 0.5, 0.2, 5)", "SRID 3857"),
            ("SELECT gf_area_contains('x', 35, 139, 5)", "no geofence catalog"),
        ]
        for (sql, expected) in cases {
            XCTAssertThrowsError(try db.scalar(sql), sql) { e in XCTAssertTrue("\(e)".contains(expected), "\(sql): \(e)") }
        }
    }

    func testReadsCompressedAndZMGeometriesLikeSpatiaLite() throws {
        let db = try Database.open(":memory:")
        let wkt = "POLYGON((139.70 35.60, 139.80 35.61, 139.79 35.70, 139.72 35.69, 139.70 35.60), (139.74 35.64, 139.76 35.64, 139.75 35.66, 139.74 35.64))"
        let forms = ["ST_GeomFromText('\(wkt)', 4326)", "CompressGeometry(ST_GeomFromText('\(wkt)', 4326))",
                     "CastToXYZM(ST_GeomFromText('\(wkt)', 4326))", "CompressGeometry(CastToXYZ(ST_GeomFromText('\(wkt)', 4326)))",
                     "CompressGeometry(CastToXYM(ST_GeomFromText('\(wkt)', 4326)))"]
        for lat in stride(from: 35.595, to: 35.705, by: 0.0073) {
            for lon in stride(from: 139.695, to: 139.805, by: 0.0069) {
                let expected = try db.scalar("SELECT ST_Contains(ST_GeomFromText('\(wkt)', 4326), MakePoint(\(lon), \(lat), 4326))")
                for form in forms {
                    let got = try db.scalar("SELECT gf_contains(\(form), \(lat), \(lon), 0)")
                    XCTAssertEqual(got, expected, "\(form) at \(lat),\(lon)")
                }
            }
        }
    }

    func testCatalogFunctionsUseAreaThresholdsAndDefaults() throws {
        let db = try newCatalog()
        let f = collection([square("A", 139, 35, 0.01, props: #","in_accuracy_max_m":20"#)])
        _ = try AreaImporter(db).run(path: write("a.geojson", f), options: .init())
        // ~100 m inside the southern edge (0.0009° of latitude).
        let lat = 35.0009, lon = 139.005
        XCTAssertEqual(try db.scalar("SELECT gf_area_contains('A', ?, ?, 20)", [.real(lat), .real(lon)]), .integer(1))
        XCTAssertEqual(try db.scalar("SELECT gf_area_contains('A', ?, ?, 21)", [.real(lat), .real(lon)]), .null, "above the area's limit")
        try Settings(db).set("default_confidence", "0.99")
        XCTAssertEqual(try db.scalar("SELECT gf_area_contains('A', ?, ?, 20)", [.real(lat), .real(lon)]), .integer(1), "2.01·20 < 100")
        XCTAssertEqual(try db.scalar("SELECT gf_area_contains('A', ?, ?, 20, 0.99)", [.real(35.0001), .real(lon)]), .null, "override p: straddles")
        XCTAssertThrowsError(try db.scalar("SELECT gf_area_contains('nope', 35, 139, 1)")) { e in
            XCTAssertTrue("\(e)".contains("names no area"), "\(e)")
        }
    }

    func testChangedGeometryIsNeverJudgedStale() throws {
        let db = try newCatalog()
        _ = try AreaImporter(db).run(path: write("a.geojson", collection([square("A", 139, 35)])), options: .init())
        XCTAssertEqual(try db.scalar("SELECT gf_area_contains('A', 35.005, 139.005, 0)"), .integer(1))
        try db.execute("UPDATE gf_areas SET geom = ST_Multi(ST_GeomFromText('POLYGON((140 35,140.01 35,140.01 35.01,140 35))', 4326)) WHERE area_id = 'A'")
        XCTAssertEqual(try db.scalar("SELECT gf_area_contains('A', 35.005, 139.005, 0)"), .integer(0))
        XCTAssertEqual(try db.scalar("SELECT gf_contains(geom, 35.005, 139.005, 0) FROM gf_areas"), .integer(0))
    }
}
