import XCTest
@testable import GeofenceCore

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
        // Held only by the producer: once the thread is stopped and joined, nothing holds it.
        weak var heldByProducer: Box<Int>?
        do {
            let token = Box(0)
            heldByProducer = token
            let seq = ReadAhead(batchSize: 16) { () -> Int? in
                token.value += 1
                made.value += 1
                return made.value
            }
            var it = seq.makeIterator()
            for _ in 0..<10 { _ = it.next() }
        }
        XCTAssertNil(heldByProducer, "dropping the sequence must stop and join its thread, which then lets go of the producer")
        XCTAssertLessThan(made.value, 1_000, "the producer ran ahead by more than its handoff holds")
    }
}
