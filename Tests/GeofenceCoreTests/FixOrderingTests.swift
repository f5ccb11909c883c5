import XCTest
@testable import GeofenceCore

/// `FixOrdering.gather` moves fixes along the cycles of a permutation in
/// place: every kind of permutation must give what copying in order gives,
/// with every id (long enough to live on the heap) intact exactly once.
final class FixOrderingTests: XCTestCase {
    func testGatherEqualsCopyingInOrder() {
        var seed: UInt64 = 7
        func next(_ n: Int) -> Int { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Int(seed >> 33) % n }
        func fixes(_ n: Int) -> [Fix] {
            (0..<n).map { Fix(subjectId: "subject with a long id, number \($0)", ts: Timestamp(microseconds: Int64($0)), lat: 0, lon: 0, accuracy: 1) }
        }
        for n in [0, 1, 2, 3, 17, 1000] {
            var orders: [[Int]] = [Array(0..<n), Array((0..<n).reversed())]
            if n > 1 { orders.append(Array(1..<n) + [0]) }  // one cycle through every fix
            var shuffled = Array(0..<n)
            for i in shuffled.indices.reversed() { shuffled.swapAt(i, next(i + 1)) }
            orders.append(shuffled)
            for order in orders {
                let original = fixes(n)
                var moved = original
                FixOrdering.gather(&moved, order.map(Int32.init))
                XCTAssertEqual(moved, order.map { original[$0] }, "n = \(n)")
            }
        }
    }
}
