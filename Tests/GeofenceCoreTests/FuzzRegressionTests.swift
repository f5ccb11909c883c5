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
        for (name, bytes) in try regressions("blob") where name.contains("count") {
            XCTAssertThrowsError(try bytes.withUnsafeBytes { try SpatiaLiteBlob.decodeAreal($0) }, name) { error in
                XCTAssertTrue("\(error)".contains("more than the BLOB holds"), "\(name): \(error)")
            }
        }
    }

    /// The in-place BLOB reader read four bytes past a 46-byte MultiPolygon
    /// that ended where its polygon count should be (found by FuzzBlob within
    /// a minute of the reader's first run). A debug build traps on such a read,
    /// so this test fails loudly if a bounds check goes missing again.
    func testShortBlobsAreRefusedByTheInPlaceReader() throws {
        for (name, bytes) in try regressions("blob") {
            bytes.withUnsafeBytes { XCTAssertNil(SpatiaLiteBlob.FlatView($0, maxVertices: 1 << 20), name) }
            XCTAssertThrowsError(try bytes.withUnsafeBytes { try SpatiaLiteBlob.decodeAreal($0) }, name)
        }
        // Every prefix of a valid BLOB, too.
        let square = [Polygon([Ring([LonLat(lon: 0, lat: 0), LonLat(lon: 1, lat: 0), LonLat(lon: 1, lat: 1), LonLat(lon: 0, lat: 0)])])]
        let blob = SpatiaLiteBlob.encodeMultiPolygon(square)
        for n in 0..<blob.count {
            var cut = Array(blob.prefix(n))
            if n > 0 { cut[n - 1] = 0xFE }
            cut.withUnsafeBytes { XCTAssertNil(SpatiaLiteBlob.FlatView($0, maxVertices: 100), "prefix \(n)") }
        }
    }
}
