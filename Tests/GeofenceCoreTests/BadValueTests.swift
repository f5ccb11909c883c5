import XCTest
@testable import GeofenceCore

/// Values that could be stored but not used are refused where they come in.
final class BadValueTests: XCTestCase {
    func testTimesLieInYears0000To9999() throws {
        XCTAssertEqual(try Timestamp.parse("253402300799.999999").storageText, "9999-12-31T23:59:59.999999Z")
        XCTAssertEqual(try Timestamp.parse("-62167219200").storageText, "0000-01-01T00:00:00.000000Z")
        // Unix seconds of more than 12 digits are a number too large, not malformed text.
        for text in ["253402300800", "999999999999", "-62167219201", "9999-12-31T23:30:00-01:00", "0000-01-01T00:30:00+01:00",
                     "1000000000000000.0", "-99999999999999.5"] {
            XCTAssertThrowsError(try Timestamp.parse(text), text) { e in
                XCTAssertEqual(e as? Timestamp.ParseError, .outOfRange(text))
            }
        }
        for text in ["1.2.3", "-", "--5", "+-5", "1e", "e3", "1e3.5", "1e+", ".", "5e3x"] {
            XCTAssertThrowsError(try Timestamp.parse(text), text) { e in XCTAssertEqual(e as? Timestamp.ParseError, .malformed(text)) }
        }
        // Any decimal, as other numbers are read, exactly; digits past the microsecond cut towards the earlier time.
        for (text, stored) in [(".5", "1970-01-01T00:00:00.500000Z"), ("5.", "1970-01-01T00:00:05.000000Z"),
                               ("1e3", "1970-01-01T00:16:40.000000Z"), ("+1.7E+9", "2023-11-14T22:13:20.000000Z"),
                               ("-0.0000001", "1969-12-31T23:59:59.999999Z"), ("-1e-7", "1969-12-31T23:59:59.999999Z"),
                               ("0.0000019", "1970-01-01T00:00:00.000001Z"), ("253402300799999999e-6", "9999-12-31T23:59:59.999999Z")] {
            XCTAssertEqual(try Timestamp.parse(text).storageText, stored, text)
        }
        XCTAssertThrowsError(try Timestamp.parse("1e12")) { e in XCTAssertEqual(e as? Timestamp.ParseError, .outOfRange("1e12")) }
        // The batch readers' fast path leaves an out-of-range time to `parse`, which names it.
        var far = "253402300800"
        XCTAssertNil(far.withUTF8 { Timestamp.parseCommon($0) })
    }

    /// A REAL time is Unix seconds whatever Swift's shortest form of it: near
    /// the epoch that form has an exponent (`1e-05`), which the text of Unix
    /// seconds has not, so it is written out without one, digit for digit.
    func testARealTimeNearTheEpochIsATime() throws {
        let cases: [(Double, String)] = [
            (1e-05, "0.00001"), (-1.234e-05, "-0.00001234"), (1.5e-07, "0.00000015"), (0, "0.0"), (1.5, "1.5"),
            (1795133100, "1795133100.0"), (1e16, "10000000000000000.0"), (1.25e17, "125000000000000000.0"),
        ]
        for (d, text) in cases { XCTAssertEqual(Timestamp.unixSecondsText(d), text, "\(d)") }
        XCTAssertEqual(try Timestamp.parse(Timestamp.unixSecondsText(1e-05)).storageText, "1970-01-01T00:00:00.000010Z")
        XCTAssertEqual(try Timestamp.parse(Timestamp.unixSecondsText(-1.234e-05)).storageText, "1969-12-31T23:59:59.999987Z")  // -12.34 µs: cut to the earlier microsecond
        XCTAssertThrowsError(try Timestamp.parse(Timestamp.unixSecondsText(1e300))) { e in
            guard case .outOfRange = e as? Timestamp.ParseError else { return XCTFail("\(e)") }
        }
        // A table's REAL column reads the same way (judge --table).
        let row = FixRow(subject: .text("u"), ts: .real(2e-05), lat: .real(0), lon: .real(0), accuracy: .real(1))
        XCTAssertEqual(try row.validated.get().ts.microseconds, 20)
    }

    /// A batch's byte reader of times (`parseCommon`) gives `parse`'s answer
    /// for every text it takes, and takes ISO 8601 with offsets as people
    /// write it; what it leaves (nil) `parse` refuses or reads another way.
    func testTheBatchTimeReaderIsParse() throws {
        var rng = SplitMix(seed: 26)
        let pieces: [[String]] = [["2026", "1999", "0000", "9999", "20x6"], ["-"], ["11", "02", "12", "13", "00"], ["-"],
                                  ["18", "29", "31", "30", "00"], ["T", "t", " ", "X", ""], ["20", "23", "00", "24"], [":"],
                                  ["07", "59", "60"], ["", ":58", ":60", ":59", ":6"],
                                  ["", ".583", ",5", ".1234567891", "."], ["+09:00", "Z", "z", "-0130", "+24:00", "-23:59", "", "+09", " "]]
        var taken = 0
        for _ in 0..<20_000 {
            var text = pieces.map { $0.randomElement(using: &rng)! }.joined()
            if Int.random(in: 0..<20, using: &rng) == 0 { text = "2016-12-31T23:59:60.5Z" }
            let fast = text.withCString { p in
                Timestamp.parseCommon(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: text.utf8.count))
            }
            if let fast {
                taken += 1
                XCTAssertEqual(fast, try? Timestamp.parse(text), text)
            }
        }
        XCTAssertGreaterThan(taken, 1000)
        var common = "2026-11-18T20:07:58.583+09:00"
        XCTAssertEqual(common.withUTF8 { Timestamp.parseCommon($0) }, try Timestamp.parse("2026-11-18T11:07:58.583Z"))
    }

    func testJSONRefusesDuplicateNamesNulAndHexadecimal() {
        XCTAssertThrowsError(try JSONReader.parse(#"{"a": 1, "b": 2, "a": 3}"#)) { e in
            XCTAssertTrue((e as? JSONSyntaxError)?.message.contains("duplicate member name 'a'") ?? false, "\(e)")
        }
        // Past the linear scan: the set of names.
        let many = (0..<40).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        XCTAssertThrowsError(try JSONReader.parse("{\(many), \"k7\": 0}"))
        XCTAssertNoThrow(try JSONReader.parse("{\(many)}"))
        // Names are told apart by their bytes: "é" and "e" + U+0301 are two names.
        XCTAssertNoThrow(try JSONReader.parse("{\"\u{e9}\": 1, \"e\u{301}\": 2}"))
        XCTAssertThrowsError(try JSONReader.parse(#"["A\u0000B"]"#))
        XCTAssertThrowsError(try JSONReader.parse("[0x1p3]")) { e in
            XCTAssertTrue((e as? JSONSyntaxError)?.message.contains("malformed number '0x1p3'") ?? false, "\(e)")
        }
        // What this program stored itself is read back as it was written.
        XCTAssertNoThrow(try JSONReader.parse(#"{"a": "x\u0000", "a": 2}"#, strict: false))
    }

    func testByteOrderMarkBeforeAFeatureCollection() throws {
        var r = FeatureCollectionReader(JSONReader(bytes: [0xEF, 0xBB, 0xBF] + Array(#"{"type": "FeatureCollection", "features": []}"#.utf8)))
        XCTAssertNil(try r.next())
        var bad = FeatureCollectionReader(JSONReader(bytes: [0xEF, 0x20] + Array("{}".utf8)))
        XCTAssertThrowsError(try bad.next())
    }

    func testCSVRefusesNul() {
        var given = false
        var reader = CSVReader(chunks: { if given { return nil }; given = true; return Array("a,b\nwalk\u{0}er,1\n".utf8) })
        XCTAssertEqual(reader.next(), ["a", "b"])
        XCTAssertNil(reader.next())
        XCTAssertTrue(reader.error?.description.contains("NUL byte") ?? false, "\(String(describing: reader.error))")
    }

    func testNumberTextIsDecimal() {
        XCTAssertEqual(NumberText.double("+1.5e2"), 150)
        XCTAssertEqual(NumberText.double(".5"), 0.5)
        XCTAssertNil(NumberText.double("0x1p3"))
        XCTAssertNil(NumberText.double("1e"))
        XCTAssertTrue(NumberText.double("NaN")?.isNaN ?? false)
        XCTAssertEqual(NumberText.double("-inf"), -.infinity)
    }

    func testEchoCutsAndEscapes() {
        XCTAssertEqual(Echo.quoted("abc"), "'abc'")
        XCTAssertEqual(Echo.quoted("a\u{0}b\n"), "'a\\u0000b\\u000a'")
        let long = Echo.quoted(String(repeating: "x", count: 10_000_000))
        XCTAssertEqual(long, "'" + String(repeating: "x", count: 200) + "… (10000000 bytes)'")
    }

    func testShapesWithoutInterior() {
        let p = LonLat(lon: 139, lat: 35), q = LonLat(lon: 139.01, lat: 35), r = LonLat(lon: 139.01, lat: 35.01)
        XCTAssertFalse(Shape.polygons([]).hasInterior)
        XCTAssertFalse(Shape.polygons([Polygon([Ring([p, p, p, p])])]).hasInterior)
        XCTAssertFalse(Shape.polygons([Polygon([Ring([p, q, p, p])])]).hasInterior)
        XCTAssertTrue(Shape.polygons([Polygon([Ring([p, q, r, p])])]).hasInterior)
    }
}
