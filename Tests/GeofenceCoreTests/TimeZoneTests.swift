import XCTest
@testable import GeofenceCore

final class TimeZoneTests: XCTestCase {
    func testNewYorkDaylightSavingFromTheTable() throws {
        let ny = try TimeZone.load("America/New_York")
        // 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z); 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z).
        XCTAssertEqual(ny.offset(at: try Timestamp.parse("2026-03-08T06:59:59Z")), -5 * 3600)
        XCTAssertEqual(ny.offset(at: try Timestamp.parse("2026-03-08T07:00:00Z")), -4 * 3600)
        XCTAssertEqual(ny.offset(at: try Timestamp.parse("2026-11-01T05:59:59Z")), -4 * 3600)
        XCTAssertEqual(ny.offset(at: try Timestamp.parse("2026-11-01T06:00:00Z")), -5 * 3600)
        let l = ny.local(try Timestamp.parse("2026-11-20T14:30:00Z"))
        XCTAssertEqual(ConditionDefinition.formatDate(l.day), "2026-11-20")
        XCTAssertEqual(l.minuteOfDay, 9 * 60 + 30)
        XCTAssertEqual(l.weekday, 4, "2026-11-20 is a Friday")
    }

    func testFooterRuleBeyondTheTable() throws {
        let ny = try TimeZone.load("America/New_York")
        // 2050 is past the table of a fat file: the POSIX footer decides.
        XCTAssertEqual(ny.offset(at: try Timestamp.parse("2050-07-01T12:00:00Z")), -4 * 3600)
        XCTAssertEqual(ny.offset(at: try Timestamp.parse("2050-12-01T12:00:00Z")), -5 * 3600)
        let rule = PosixRule("EST5EDT,M3.2.0,M11.1.0")!
        XCTAssertEqual(rule.offset(atUTC: (try Timestamp.parse("2026-03-08T07:00:00Z")).microseconds / 1_000_000), -4 * 3600)
        XCTAssertEqual(rule.offset(atUTC: (try Timestamp.parse("2026-03-08T06:59:59Z")).microseconds / 1_000_000), -5 * 3600)
        let sydney = PosixRule("AEST-10AEDT,M10.1.0,M4.1.0/3")!
        XCTAssertEqual(sydney.offset(atUTC: (try Timestamp.parse("2026-01-15T00:00:00Z")).microseconds / 1_000_000), 11 * 3600)
        XCTAssertEqual(sydney.offset(atUTC: (try Timestamp.parse("2026-06-15T00:00:00Z")).microseconds / 1_000_000), 10 * 3600)
        XCTAssertEqual(PosixRule("<+09>-9")!.offset(atUTC: 0), 9 * 3600)
    }

    func testTokyoAndUTC() throws {
        let tokyo = try TimeZone.load("Asia/Tokyo")
        let l = tokyo.local(try Timestamp.parse("2026-11-20T15:30:00Z"))
        XCTAssertEqual(ConditionDefinition.formatDate(l.day), "2026-11-21")
        XCTAssertEqual(l.minuteOfDay, 30)
        XCTAssertEqual(TimeZone.utc.offset(at: Timestamp(microseconds: 0)), 0)
        XCTAssertThrowsError(try TimeZone.load("Mars/Olympus"))
    }

    /// Every zone in the system's tzdata loads, footer rule included: the
    /// parser is strict (a damaged footer is refused), so it must not be
    /// stricter than the real data.
    func testEveryZoneOfTheSystemLoads() throws {
        let table = try String(contentsOfFile: "/usr/share/zoneinfo/tzdata.zi", encoding: .utf8)
        var zones = Set<String>()
        for line in table.split(separator: "\n") where line.hasPrefix("Z ") || line.hasPrefix("L ") {
            let parts = line.split(separator: " ")
            zones.insert(String(parts[line.hasPrefix("Z ") ? 1 : 2]))
        }
        XCTAssertGreaterThan(zones.count, 300)
        var loaded = 0
        for name in zones.sorted() where TimeZoneNames.isKnown(name) {
            XCTAssertNoThrow(try TimeZone.load(name), name)
            loaded += 1
        }
        // Without the zone files this loop tests nothing: that is a failure, not a pass (Debian: tzdata).
        XCTAssertGreaterThan(loaded, 300, "the system's zone files are missing: apt-get install tzdata")
    }
}
