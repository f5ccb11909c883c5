import XCTest
@testable import GeofenceSQL

final class ReadAheadTests: XCTestCase {
    /// Everything the producer makes comes out, in order, across batches.
    func testEveryElementInOrder() {
        var n = 0
        let seq = ReadAhead(batchSize: 7) { () -> Int? in
            defer { n += 1 }
            return n < 10_000 ? n : nil
        }
        XCTAssertEqual(Array(seq), Array(0..<10_000))
    }

    /// A consumer that stops early (judgement failing on a row) drops the
    /// sequence while the producer waits for room: that must stop the
    /// producer and return, not hang, and the producer must not run on.
    func testDroppingItEarlyStopsTheProducer() {
        let made = Box(0)
        do {
            let seq = ReadAhead(batchSize: 16) { () -> Int? in
                made.value += 1
                return made.value
            }
            var it = seq.makeIterator()
            for _ in 0..<10 { _ = it.next() }
        }
        // The thread has been joined: the count no longer moves.
        let after = made.value
        usleep(50_000)
        XCTAssertEqual(made.value, after)
        XCTAssertLessThan(after, 1_000, "the producer ran ahead by more than its handoff holds")
    }
}
