import XCTest
@testable import GeofenceSQL

/// The writer's table of keys by id: ids are told apart by their bytes, as
/// SQLite tells them, and every id put in is found after the table grows.
final class KeysByBytesTests: XCTestCase {
    func testCanonicallyEquivalentIdsAreTwoIds() {
        var known = KeysByBytes()
        known["caf\u{e9}"] = 1
        XCTAssertEqual(known["caf\u{e9}"], 1)
        XCTAssertNil(known["cafe\u{301}"], "the decomposed form is another id to SQLite")
        known["cafe\u{301}"] = 2
        XCTAssertEqual(known["caf\u{e9}"], 1)
        XCTAssertEqual(known["cafe\u{301}"], 2)
        XCTAssertTrue(KeysByBytes.same("a", "a"))
        XCTAssertFalse(KeysByBytes.same("caf\u{e9}", "cafe\u{301}"))
    }

    func testEveryIdIsFoundAfterGrowingAndNoneAfterRemoveAll() {
        var known = KeysByBytes()
        let ids = (0..<5000).map { "S\($0)" } + ["", "x", String(repeating: "long-id-", count: 20)]
        for (k, id) in ids.enumerated() { known[id] = Int64(k) }
        known["x"] = 99
        for (k, id) in ids.enumerated() { XCTAssertEqual(known[id], id == "x" ? 99 : Int64(k), id) }
        XCTAssertNil(known["S5000"])
        known.removeAll()
        XCTAssertNil(known["S1"])
        known["S1"] = 7
        XCTAssertEqual(known["S1"], 7)
    }
}
