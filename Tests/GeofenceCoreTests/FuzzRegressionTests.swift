import Foundation
import XCTest
@testable import GeofenceCore

/// Inputs that coverage-guided fuzzing (scripts/fuzz.sh) found to crash or
/// exhaust memory, replayed on every test run. The files live beside the seed
/// corpus as fuzz/corpus/<harness>/regression-*, so the fuzzer replays them too.
final class FuzzRegressionTests: XCTestCase {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fuzz/corpus")

    func regressions(_ harness: String) throws -> [(String, [UInt8])] {
        let dir = Self.corpus.appendingPathComponent(harness)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("regression-") }.sorted()
        XCTAssertFalse(names.isEmpty, "no regression inputs in \(dir.path)")
        return try names.map { ($0, Array(try Data(contentsOf: dir.appendingPathComponent($0)))) }
    }

    func testTimeZoneFilesThatCrashedAreRefused() throws {
        for (name, bytes) in try regressions("time") where bytes.first.map({ $0 & 1 == 1 }) ?? false {
            XCTAssertNil(TimeZone.parse(name: name, Array(bytes.dropFirst())), name)
        }
        // The first find: a footer rule whose hour field overflowed Int.
        XCTAssertNil(PosixRule("EST99999999999999999999EDT"))
        XCTAssertNil(PosixRule("EST5EDT,M13.2.0,M11.1.0"), "month 13")
        XCTAssertNil(PosixRule("EST5EDT,M3.9.0,M11.1.0"), "week 9")
        XCTAssertNil(PosixRule("EST5EDT,J0,J365"), "Julian day 0 does not exist in the J form")
        XCTAssertNotNil(PosixRule("<-03>3<-02>,M3.5.0/-2,M10.5.0/-1"), "negative transition times are legal")
    }

    func testBlobsThatExhaustedMemoryAreRefused() throws {
        for (name, bytes) in try regressions("blob") {
            XCTAssertThrowsError(try bytes.withUnsafeBytes { try SpatiaLiteBlob.decodeAreal($0) }, name) { error in
                XCTAssertTrue("\(error)".contains("more than the BLOB holds"), "\(name): \(error)")
            }
        }
    }
}
