import XCTest
@testable import GeofenceCore

final class StayMapTests: XCTestCase {
    func stay(_ n: Int) -> StayState { var s = StayState(); s.inStreak = n; return s }

    /// Keys stay in Swift string order however they are written, so the judge
    /// can merge them with candidates; setting nil removes.
    func testKeysStaySortedThroughWritesAndRemovals() {
        var m = StayMap()
        for (i, id) in ["m", "b", "z", "a", "é", "k"].enumerated() { m[id] = stay(i) }
        XCTAssertEqual(m.keys, ["a", "b", "k", "m", "z", "é"])
        XCTAssertEqual(m["z"]?.inStreak, 2)
        m["z"] = stay(9)
        m["b"] = nil
        m["absent"] = nil
        XCTAssertEqual(m.keys, ["a", "k", "m", "z", "é"])
        XCTAssertEqual(m["z"]?.inStreak, 9)
        XCTAssertNil(m["b"])
        XCTAssertEqual(m.map(\.0), m.keys)
        XCTAssertEqual(m.map(\.1.inStreak), [3, 5, 0, 9, 4])
    }

    /// Equal maps are equal however they were built (the state store compares before and after).
    func testEqualityIgnoresHowTheMapWasBuilt() {
        var built = StayMap()
        built["y"] = stay(2); built["x"] = stay(1)
        let literal: StayMap = ["x": stay(1), "y": stay(2)]
        XCTAssertEqual(built, literal)
        built.insert("w", stay(0), at: 0)
        XCTAssertNotEqual(built, literal)
        built.remove(at: 0)
        XCTAssertEqual(built, literal)
        // "é" precomposed and decomposed are two keys, as SQLite's UNIQUE tells
        // them apart, in byte order ("e" 0x65 before 0xC3); and so are two
        // strings Swift's `<` orders neither way ("A" + ring above, "Åx").
        var canonical = StayMap()
        canonical["\u{e9}"] = stay(1)
        canonical["e\u{301}"] = stay(2)
        canonical["\u{c5}x"] = stay(3)
        canonical["A\u{30a}"] = stay(4)
        XCTAssertEqual(canonical.count, 4)
        XCTAssertEqual(canonical["\u{e9}"]?.inStreak, 1)
        XCTAssertEqual(canonical["e\u{301}"]?.inStreak, 2)
        XCTAssertEqual(canonical.keys.map { Array($0.utf8) }, ["A\u{30a}", "e\u{301}", "\u{c5}x", "\u{e9}"].map { Array($0.utf8) })
    }

    /// Stays live apart from the sorted entries, and a removed stay's place is
    /// reused: after any mix of writes, removals and positional changes the
    /// map must hold what a plain dictionary holds, and equal one built afresh.
    func testRandomWritesMatchADictionary() {
        var r = ChordTests.Random(state: 11)
        var m = StayMap()
        var reference: [String: StayState] = [:]
        for step in 0..<3_000 {
            let id = "a\(Int(r.range(0, 40)))"
            switch Int(r.range(0, 4)) {
            case 0, 1:
                var s = stay(step)
                if step % 3 == 0 { s.dwellSpent = [Int64(step)] }
                m[id] = s; reference[id] = s
            case 2:
                m[id] = nil; reference[id] = nil
            default:
                guard !m.isEmpty else { continue }
                let i = Int(r.range(0, Double(m.count)))
                m[at: i].outStreak += 1
                reference[m.key(at: i)]!.outStreak += 1
            }
            XCTAssertEqual(m.keys, reference.keys.sorted())
            for (k, v) in m { XCTAssertEqual(v, reference[k], "step \(step), \(k)") }
        }
        var fresh = StayMap()
        for (k, v) in reference { fresh[k] = v }
        XCTAssertEqual(m, fresh)
    }
}
