import XCTest
@testable import GeofenceCore
@testable import GeofenceSQL

/// gf_check's return text, written byte by byte, is the text the general
/// JSON writer gives for the same members: checked against a JSONValue tree
/// built here, on ids that need escapes, integral and fractional numbers,
/// and times with and without fractions.
final class NotificationJSONTests: XCTestCase {
    private func reference(_ ns: [GeofenceCore.Notification]) -> String {
        JSONValue.array(ns.map { n in
            .object([("subject_id", .string(n.subjectId)), ("ts", .string(n.ts.iso8601)), ("area_id", .string(n.areaId)),
                     ("condition_id", .number(String(n.conditionId))), ("transition", .string(n.transition.rawValue)),
                     ("lat", JSONValue.number(n.lat)), ("lon", JSONValue.number(n.lon)), ("accuracy_m", JSONValue.number(n.accuracy))])
        }).serialized
    }

    private func note(_ subject: String, _ area: String, micros: Int64, lat: Double, lon: Double, acc: Double,
                      condition: Int64 = 7, timing: ConditionDefinition.Timing = .IN) -> GeofenceCore.Notification {
        GeofenceCore.Notification(subjectId: subject, ts: Timestamp(microseconds: micros), areaId: area, conditionId: condition,
                     transition: timing, lat: lat, lon: lon, accuracy: acc, localDay: 0)
    }

    func testSameTextAsTheGeneralWriter() {
        let cases: [[GeofenceCore.Notification]] = [
            [],
            [note("u1", "A1", micros: 1_763_600_085_000_000, lat: 35.0, lon: 139.0, acc: 10)],
            [note("quote\"back\\slash", "tab\there\nline\u{1}", micros: 1_763_600_085_410_000, lat: -33.8688197, lon: 151.2092955,
                  acc: 0.5, condition: -3, timing: .OUT),
             note("東京👩‍💻", "área", micros: -1, lat: 1e-7, lon: -180, acc: 123456789012345.0, condition: Int64.max, timing: .DWELL),
             note("", "", micros: 0, lat: 0.1 + 0.2, lon: 1e20, acc: 0)],
            [note("u", "a", micros: 253_402_300_799_999_999, lat: -0.0, lon: -1e15 + 1, acc: 999_999_999_999_999.9, condition: Int64.min),
             note("u", "a", micros: -62_135_596_800_000_000, lat: -1e15, lon: 5e-324, acc: .greatestFiniteMagnitude, condition: 0)],
        ]
        for ns in cases {
            XCTAssertEqual(String(decoding: NotificationJSON.array(ns), as: UTF8.self), reference(ns))
        }
    }
}
