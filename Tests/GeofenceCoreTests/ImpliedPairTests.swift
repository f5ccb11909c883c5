import XCTest
@testable import GeofenceCore

/// An area with only its implied pair is made directly
/// (`JudgedArea.init(definition:defaultConfidence:impliedPair:zone:)`); it
/// must be the area the plain init makes of the same two conditions, field
/// by field, or the batch paths that use it would judge differently.
final class ImpliedPairTests: XCTestCase {
    func testThePairMadeDirectlyIsThePlainInitsArea() throws {
        let tokyo = try GeofenceCore.TimeZone.load("Asia/Tokyo")
        var d = AreaDefinition(areaId: "é-area", shape: .circle(Circle(center: LonLat(lon: 139.7, lat: 35.6), radiusM: 100)))
        d.inConfirmCount = 2
        for first: Int64 in [1, 41, Int64.max - 1] {
            let (inC, outC) = ConditionDefinition.impliedPair(area: d.areaId, first: first)
            XCTAssertEqual([inC.conditionId, outC.conditionId, inC.dwellSeconds ?? 0], [first, first + 1, 0])
            XCTAssertEqual([inC.timing, outC.timing], [.IN, .OUT])
            let pair = [(inC, tokyo), (outC, tokyo)]
            let plain = JudgedArea(definition: d, defaultConfidence: 0.5, conditions: pair.reversed())
            let direct = JudgedArea(definition: d, defaultConfidence: 0.5, impliedPair: first, zone: tokyo)
            XCTAssertEqual(direct.conditions.map(\.0), plain.conditions.map(\.0))
            XCTAssertTrue(zip(direct.conditions, plain.conditions).allSatisfy { $0.1 === $1.1 })
            func fields(_ a: JudgedArea) -> [String] {
                a.notifying.map { "\($0.conditionId) \($0.definition) \($0.timing) \($0.suppressDays) \($0.filtered) \($0.zone.takeUnretainedValue() === tokyo)" }
            }
            XCTAssertEqual(fields(direct), fields(plain))
            XCTAssertEqual([direct.inNotifying, direct.outNotifying, direct.dwellNotifying], [plain.inNotifying, plain.outNotifying, plain.dwellNotifying])
            XCTAssertEqual(direct.dwellConditions.count, 0)
            XCTAssertEqual(direct.traits, plain.traits)
            XCTAssertEqual(direct.rule, plain.rule)
        }
    }
}
