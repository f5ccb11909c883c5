import XCTest
@testable import GeofenceCore

/// Each trait is the rule that lets a short-circuit skip work, so each is
/// checked against the area fields that break it.
final class AreaTraitsTests: XCTestCase {
    func traits(_ change: (inout AreaDefinition) -> Void = { _ in }, confidence: Double = 0,
                conditions: [ConditionDefinition.Timing] = []) throws -> AreaTraits {
        var d = AreaDefinition(areaId: "A", shape: .circle(Circle(center: LonLat(lon: 139.7, lat: 35.6), radiusM: 100)))
        change(&d)
        let utc = try GeofenceCore.TimeZone.load("UTC")
        let cs = conditions.enumerated().map { k, t -> (ConditionDefinition, GeofenceCore.TimeZone) in
            var c = ConditionDefinition(conditionId: Int64(k + 1), areaId: "A", timing: t)
            if t == .DWELL { c.dwellSeconds = 60 }
            return (c, utc)
        }
        return JudgedArea(definition: d, defaultConfidence: confidence, conditions: cs).traits
    }

    func testEachFieldBreaksTheTraitsItShould() throws {
        XCTAssertEqual(try traits(), [.insideOnlyLengthens, .outsideIsCertain, .verdictIsContainment])
        // IN and OUT fire only on transitions: the streak short-circuit stays.
        XCTAssertEqual(try traits(conditions: [.IN, .OUT]), [.insideOnlyLengthens, .outsideIsCertain, .verdictIsContainment, .hasConditions])
        // A DWELL can come due on a fix that only lengthens the stay.
        XCTAssertEqual(try traits(conditions: [.IN, .DWELL]), [.outsideIsCertain, .verdictIsContainment, .hasConditions])
        XCTAssertEqual(try traits({ $0.validFrom = Timestamp(microseconds: 1) }), [])
        XCTAssertEqual(try traits({ $0.validUntil = Timestamp(microseconds: 1) }), [])
        XCTAssertEqual(try traits({ $0.inAccuracyMaxM = 50 }), [.outsideIsCertain])
        XCTAssertEqual(try traits({ $0.outAccuracyMaxM = 50 }), [.insideOnlyLengthens])
        XCTAssertEqual(try traits({ $0.confidence = 0.9 }), [])
        XCTAssertEqual(try traits(confidence: 0.9), [])
        XCTAssertEqual(try traits({ $0.confidence = 0 }, confidence: 0.9), [.insideOnlyLengthens, .outsideIsCertain, .verdictIsContainment])
    }
}
