import XCTest
import Foundation
import GeofenceCore
import GeofenceHost
@testable import GeofenceSQL

/// Real SpatiaLite databases in a temporary folder, opened the way the CLI opens them.
class DatabaseTestCase: XCTestCase {
    var dir: String!

    override func setUp() {
        dir = "/tmp/geofence-tests-\(getpid())-\(name.filter { $0.isLetter || $0.isNumber })"
        try? FileManager.default.removeItem(atPath: dir)
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func newCatalog() throws -> Connection {
        let db = try Database.open(dir + "/t.db", create: true)
        try Schema.create(db)
        return db
    }

    func write(_ name: String, _ text: String) -> String {
        let path = dir + "/" + name
        try! text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func collection(_ features: [String], extra: String = "") -> String {
        #"{"type":"FeatureCollection"\#(extra),"features":[\#(features.joined(separator: ","))]}"#
    }

    func square(_ id: String, _ lon: Double, _ lat: Double, _ size: Double = 0.01, props: String = "") -> String {
        let c = "[[\(lon),\(lat)],[\(lon + size),\(lat)],[\(lon + size),\(lat + size)],[\(lon),\(lat + size)],[\(lon),\(lat)]]"
        return #"{"type":"Feature","properties":{"area_id":"\#(id)"\#(props)},"geometry":{"type":"Polygon","coordinates":[\#(c)]}}"#
    }
}

final class CatalogTests: DatabaseTestCase {
    func testSchemaVersionIsCheckedOnOpen() throws {
        let db = try newCatalog()
        XCTAssertEqual(try Schema.state(of: db), .current)
        try db.execute("UPDATE gf_meta SET value = '99' WHERE key = 'schema_version'")
        XCTAssertThrowsError(try Schema.open(db)) { e in XCTAssertTrue("\(e)".contains("newer"), "\(e)") }
        XCTAssertThrowsError(try Schema.create(db))
    }

    func testAnOlderCatalogIsUpgradedInPlaceOnOpen() throws {
        let db = try Database.open(dir + "/old.db", create: true)
        try Schema.create(db, version: 1)
        XCTAssertEqual(try Schema.state(of: db), .older(1))
        _ = try AreaImporter(db).run(path: write("a.geojson", collection([square("A", 139, 35)])), options: .init())
        try Schema.open(db)
        XCTAssertEqual(try Schema.state(of: db), .current)
        XCTAssertEqual(try AreaStore(db).all().map(\.areaId), ["A"], "the areas survive the upgrade")
        let (_, notes) = try Judgement(db).check(Judgement.Row(subjectId: "s", ts: "2026-01-01T00:00:00Z", lat: 35.005, lon: 139.005, accuracy: 5))
        XCTAssertEqual(notes, [], "the judgement tables exist after the upgrade")
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM gf_stays").int64, 1)
    }

    /// Version 4 turned gf_stays into a view over gf_stay_rows: stays stored
    /// before keep their streaks, count on from them, and still go with their area.
    func testStaysSurviveTheUpgradeToStreakRows() throws {
        let db = try Database.open(dir + "/v3.db", create: true)
        try Schema.create(db, version: 3)
        _ = try AreaImporter(db).run(path: write("a.geojson", collection([square("A", 139, 35), square("B", 139.1, 35)])), options: .init())
        try db.execute("""
            INSERT INTO gf_subjects VALUES ('s', '2026-01-01T00:00:00.000000Z', 35.005, 139.005, 5);
            INSERT INTO gf_stays VALUES ('s', 'A', 'INSIDE', 7, 0, '2026-01-01T00:00:00.000000Z', NULL);
            INSERT INTO gf_stays VALUES ('s', 'B', 'UNKNOWN', 1, 0, NULL, NULL);
            """)
        XCTAssertThrowsError(try Judgement(db)) { e in XCTAssertTrue("\(e)".contains("schema version 3"), "\(e)") }
        XCTAssertThrowsError(try db.scalar("SELECT gf_check('s', '2026-01-01T00:01:00Z', 35.005, 139.005, 5)")) { e in
            XCTAssertTrue("\(e)".contains("gf_check: the catalog has schema version 3, and judgement needs version \(Schema.currentVersion)"), "\(e)")
        }
        try Schema.open(db)
        XCTAssertEqual(try db.query("SELECT area_id, state, in_streak FROM gf_stays ORDER BY area_id"),
                       [[.text("A"), .text("INSIDE"), .integer(7)], [.text("B"), .text("UNKNOWN"), .integer(1)]])
        _ = try Judgement(db).check(Judgement.Row(subjectId: "s", ts: "2026-01-01T00:01:00Z", lat: 35.005, lon: 139.005, accuracy: 5))
        XCTAssertEqual(try db.query("SELECT area_id, state, in_streak FROM gf_stays ORDER BY area_id"),
                       [[.text("A"), .text("INSIDE"), .integer(8)]], "B's streak is broken by a fix outside it")
        try db.execute("DELETE FROM gf_areas WHERE area_id = 'A'")
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM gf_stays").int64, 0, "an area's removal still removes its stays")
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM gf_inside").int64, 0)
        XCTAssertFalse(try db.scalar("SELECT record FROM gf_subject_state WHERE subject_id = 's'").string?.contains(#""area":"A""#) ?? true,
                       "an INSIDE stay leaves its record with the area")
    }

    func testImportIsAllOrNothing() throws {
        let db = try newCatalog()
        let good = write("good.geojson", collection([square("A", 139, 35), square("B", 139.1, 35)]))
        let report = try AreaImporter(db).run(path: good, options: .init())
        XCTAssertEqual(report.imported, 2)
        // The third feature is bad: nothing of this file may land, and A and B stay as they were.
        let bad = write("bad.geojson", collection([square("C", 139.2, 35), square("D", 139.3, 35),
                                                   square("E", 139.4, 35, props: #","in_confirm_count":0"#)]))
        XCTAssertThrowsError(try AreaImporter(db).run(path: bad, options: .init())) { e in
            let err = e as! InputError
            XCTAssertEqual(err.item, "feature 2")
            XCTAssertEqual(err.id, "E")
            XCTAssertEqual(err.field, "properties.in_confirm_count")
        }
        XCTAssertEqual(try AreaStore(db).all().map(\.areaId), ["A", "B"])
        // Duplicate ids fail unless upsert; replace swaps the whole catalog.
        XCTAssertThrowsError(try AreaImporter(db).run(path: good, options: .init())) { e in
            XCTAssertTrue("\(e)".contains("duplicate area_id"), "\(e)")
        }
        var upsert = AreaImporter.Options(); upsert.upsert = true
        XCTAssertEqual(try AreaImporter(db).run(path: good, options: upsert).imported, 2)
        var replace = AreaImporter.Options(); replace.replace = true; replace.defaultConditions = true; replace.group = "G"
        let other = write("other.geojson", collection([square("X", 140, 35)]))
        _ = try AreaImporter(db).run(path: other, options: replace)
        XCTAssertEqual(try AreaStore(db).all().map(\.areaId), ["G#X"])
        XCTAssertEqual(try ConditionStore(db).all().map { "\($0.conditionId) \($0.timing)" }, ["1 IN", "2 OUT"])
    }

    /// Features are parsed on a second thread (FeatureParser) in batches while
    /// this one inserts: the first bad feature must still be the one reported,
    /// whichever side finds it, with nothing landed, and an insert failing
    /// early must stop the parser that has run ahead (no hang, no leak).
    func testImportReportsTheFirstBadFeatureWhicheverThreadFindsIt() throws {
        let db = try newCatalog()
        let squares = (0..<3000).map { square("S\($0)", 139 + Double($0 % 100) * 0.01, 35 + Double($0 / 100) * 0.01) }
        // A duplicate id (found by the inserting thread) before malformed JSON (found by the parser).
        var features = squares
        features[300] = square("S10", 139, 35)
        features[2500] = #"{"type":"Feature",}"#
        XCTAssertThrowsError(try AreaImporter(db).run(path: write("dup.geojson", collection(features)), options: .init())) { e in
            let err = e as! InputError
            XCTAssertEqual(err.item, "feature 300", "\(e)")
            XCTAssertTrue(err.message.contains("duplicate area_id"), "\(e)")
        }
        XCTAssertEqual(try AreaStore(db).count, 0)
        // A bad property (found by the parser) after many good batches.
        features = squares
        features[2900] = square("bad", 139, 35, props: #","in_confirm_count":0"#)
        XCTAssertThrowsError(try AreaImporter(db).run(path: write("bad.geojson", collection(features)), options: .init())) { e in
            XCTAssertEqual((e as! InputError).item, "feature 2900", "\(e)")
        }
        XCTAssertEqual(try AreaStore(db).count, 0)
        // The whole file, with a member after the features: every area, and the member read.
        let report = try AreaImporter(db).run(path: write("ok.geojson", "{\"type\":\"FeatureCollection\",\"features\":["
                                                          + squares.joined(separator: ",") + "],\"updated_at\":\"2026-01-02T00:00:00Z\"}"),
                                              options: .init())
        XCTAssertEqual(report.imported, 3000)
        XCTAssertEqual(report.updatedAt, try Timestamp.parse("2026-01-02T00:00:00Z"))
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM gf_areas WHERE area_id LIKE 'S%'"), .integer(3000))
        // An insert failing at the second feature while the parser is far ahead: it stops, nothing lands.
        XCTAssertThrowsError(try AreaImporter(db).run(path: write("early.geojson", collection([square("new", 140, 36)] + squares)),
                                                      options: .init())) { e in
            XCTAssertEqual((e as! InputError).item, "feature 1", "\(e)")
        }
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM gf_areas WHERE area_id = 'new'"), .integer(0))
    }

    /// Imports fill the R*Tree in bulk (BulkSpatialIndex): after inserts,
    /// upserts that move an area, and a replace, every area has exactly its
    /// box in the index and SpatiaLite's triggers are back for later writes.
    func testSpatialIndexMatchesTheAreasAfterBulkImports() throws {
        let db = try newCatalog()
        func check() throws {
            XCTAssertEqual(try db.scalar("""
                SELECT count(*) FROM gf_areas AS a LEFT JOIN idx_gf_areas_geom AS r ON r.pkid = a.id
                WHERE r.pkid IS NULL OR abs(r.xmin - MbrMinX(a.geom)) > 1e-5 OR abs(r.ymax - MbrMaxY(a.geom)) > 1e-5
                """), .integer(0))
            XCTAssertEqual(try db.scalar("SELECT count(*) FROM idx_gf_areas_geom"), try db.scalar("SELECT count(*) FROM gf_areas"))
            XCTAssertEqual(try db.scalar("SELECT count(*) FROM sqlite_master WHERE name IN ('gii_gf_areas_geom', 'tmi_gf_areas_geom')"), .integer(2))
        }
        _ = try AreaImporter(db).run(path: write("a.geojson", collection([square("A", 139, 35), square("B", 139.1, 35)])), options: .init())
        try check()
        var upsert = AreaImporter.Options(); upsert.upsert = true
        _ = try AreaImporter(db).run(path: write("b.geojson", collection([square("A", 140, 36), square("C", 139.2, 35)])), options: upsert)
        try check()
        XCTAssertEqual(try db.scalar("SELECT xmin FROM idx_gf_areas_geom AS r JOIN gf_areas AS a ON a.id = r.pkid WHERE a.area_id = 'A'").double ?? 0, 140, accuracy: 1e-4)
        var replace = AreaImporter.Options(); replace.replace = true
        _ = try AreaImporter(db).run(path: write("c.geojson", collection([square("D", 141, 37)])), options: replace)
        try check()
        try AreaStore(db).insert(AreaDefinition(areaId: "E", shape: .circle(Circle(center: LonLat(lon: 142, lat: 38), radiusM: 100))), upsert: false)
        try check()
    }

    func testMalformedJSONIsLocated() throws {
        let db = try newCatalog()
        let path = write("broken.geojson", "{\"type\":\"FeatureCollection\",\"features\":[\n" + square("A", 139, 35) + ",\n{\"type\": \"Feature\", }]}")
        XCTAssertThrowsError(try AreaImporter(db).run(path: path, options: .init())) { e in
            XCTAssertTrue("\(e)".contains("line 3"), "\(e)")
            XCTAssertTrue("\(e)".contains("feature 1"), "\(e)")
        }
        XCTAssertEqual(try AreaStore(db).count, 0)
    }

    func testSelfIntersectionIsRefusedOrRepaired() throws {
        let db = try newCatalog()
        let bowtie = #"{"type":"Feature","properties":{"area_id":"bow"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}}"#
        let path = write("bow.geojson", collection([bowtie]))
        XCTAssertThrowsError(try AreaImporter(db).run(path: path, options: .init())) { e in
            XCTAssertTrue("\(e)".contains("Self-intersection"), "\(e)")
        }
        var o = AreaImporter.Options(); o.makeValid = true
        let r = try AreaImporter(db).run(path: path, options: o)
        XCTAssertEqual(r.repaired.count, 1)
        guard case .polygons(let parts)? = try AreaStore(db).get("bow")?.shape else { return XCTFail("no area") }
        XCTAssertEqual(parts.count, 2, "MakeValid splits a bow-tie into two triangles")
    }

    func testUpdateTimeGuard() throws {
        let db = try newCatalog()
        let newer = write("n.geojson", collection([square("A", 139, 35)], extra: #","updated_at":"2026-05-01T00:00:00Z""#))
        let older = write("o.geojson", collection([square("B", 139, 35)], extra: #","updated_at":"2026-04-01T00:00:00+09:00""#))
        var o = AreaImporter.Options(); o.replace = true
        _ = try AreaImporter(db).run(path: newer, options: o)
        XCTAssertThrowsError(try AreaImporter(db).run(path: older, options: o)) { e in
            XCTAssertTrue("\(e)".contains("2026-03-31T15:00:00Z") && "\(e)".contains("2026-05-01T00:00:00Z"), "\(e)")
        }
        XCTAssertEqual(try AreaStore(db).all().map(\.areaId), ["A"])
        o.force = true
        _ = try AreaImporter(db).run(path: older, options: o)
        XCTAssertEqual(try AreaStore(db).all().map(\.areaId), ["B"])
    }

    func testConditionsNeedAreasAndGoWithThem() throws {
        let db = try newCatalog()
        _ = try AreaImporter(db).run(path: write("a.geojson", collection([square("A", 139, 35)])), options: .init())
        let store = ConditionStore(db)
        try store.insert(ConditionDefinition(conditionId: 1, areaId: "A", timing: .IN))
        XCTAssertThrowsError(try store.insert(ConditionDefinition(conditionId: 2, areaId: "nope", timing: .IN))) { e in
            XCTAssertEqual((e as? InputError)?.field, "area_id")
        }
        // Plain SQL cannot sneak one in either: the trigger holds without PRAGMA foreign_keys.
        XCTAssertThrowsError(try db.execute("INSERT INTO gf_conditions (condition_id, area_id, timing) VALUES (3, 'nope', 'IN')"))
        XCTAssertTrue(try AreaStore(db).remove("A"))
        XCTAssertEqual(try store.all().count, 0)
    }

    func testSettingsAreValidated() throws {
        let db = try newCatalog()
        let s = Settings(db)
        try s.set("default_timezone", "America/New_York")
        XCTAssertEqual(try s.get("default_timezone"), "America/New_York")
        XCTAssertThrowsError(try s.set("default_timezone", "Nowhere/City"))
        XCTAssertThrowsError(try s.set("default_confidence", "1"))
        XCTAssertThrowsError(try s.set("colour", "blue"))
    }
}
