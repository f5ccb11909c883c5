import XCTest
@testable import GeofenceCore

final class JSONTests: XCTestCase {
    func testParsesAndKeepsNumberText() throws {
        let v = try JSONReader.parse(#"{"a": [1, 2.5e3, -0], "b": "x\u00e9\ud83d\ude00", "c": null, "d": 12345678901234567890}"#)
        XCTAssertEqual(v["b"], .string("xé😀"))
        XCTAssertEqual(v["d"], .number("12345678901234567890"))
        XCTAssertEqual(try JSONReader.parse(v.serialized), v)
        // Past the 64-character stack buffer, and malformed at its edge.
        let long = "1." + String(repeating: "0", count: 100) + "1e-5"
        XCTAssertEqual(try JSONReader.parse("[\(long)]"), .array([.number(long)]))
        XCTAssertThrowsError(try JSONReader.parse("[" + String(repeating: "1", count: 63) + "-]"))
        XCTAssertThrowsError(try JSONReader.parse("[" + String(repeating: "1", count: 70) + ".]"))
    }

    /// The byte writer of JSON strings gives exactly the String writer's text:
    /// every control byte, quote and backslash, and multi-byte UTF-8 left raw.
    func testAppendStringIsWriteStringAsBytes() {
        var all = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        all += ["", "plain", #"q"uote\back"#, "tab\there\r\n", "é東京😀\u{2028}\u{7f}", "\u{1b}[31m\u{0}end", "\u{1f}\u{10}\u{a}"]
        all.append(all.joined())
        for s in all {
            var text = ""
            JSONValue.writeString(s, to: &text)
            var bytes: [UInt8] = [0x5B]
            JSONValue.appendString(s, to: &bytes)
            XCTAssertEqual(bytes, [0x5B] + Array(text.utf8), s.debugDescription)
        }
    }

    func testErrorsSayWhere() {
        XCTAssertThrowsError(try JSONReader.parse("{\n  \"a\": [1, 2,]\n}")) { e in
            let err = e as! JSONSyntaxError
            XCTAssertEqual(err.line, 2)
            XCTAssertTrue(err.message.contains("expected a value"), err.message)
        }
        XCTAssertThrowsError(try JSONReader.parse("[NaN]"))
        XCTAssertThrowsError(try JSONReader.parse("[01]"))
        XCTAssertThrowsError(try JSONReader.parse(String(repeating: "[", count: 100_000))) { e in
            XCTAssertTrue((e as! JSONSyntaxError).message.contains("nesting"))
        }
    }

    func testFeatureCollectionStreamsAndCollectsMembers() throws {
        let text = #"{"features": [{"type":"Feature"}, {"type":"Feature","id":2}], "type": "FeatureCollection", "updated_at": "2026-01-01T00:00:00Z"}"#
        var r = FeatureCollectionReader(JSONReader(string: text))
        var n = 0
        while try r.next() != nil { n += 1 }
        XCTAssertEqual(n, 2)
        XCTAssertEqual(r.foreignMembers.first?.0, "updated_at")
        var bad = FeatureCollectionReader(JSONReader(string: #"{"type": "Feature", "features": []}"#))
        XCTAssertThrowsError(try bad.next())
    }
}

final class TimestampTests: XCTestCase {
    /// The stored form is written byte by byte: fixed width, read back
    /// exactly, and in time order as text, from year 0 to 9999.
    func testStorageTextRoundTripsAndSorts() throws {
        var seed: UInt64 = 3
        func next() -> Int64 { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Int64(bitPattern: seed >> 1) }
        let lo: Int64 = -62_167_219_200_000_000, hi: Int64 = 253_402_300_799_999_999  // 0000-01-01 … 9999-12-31T23:59:59.999999
        var stamps = [lo, hi, 0, -1, 1, 951_782_400_000_000]  // and 2000-02-29
        for _ in 0..<2000 { stamps.append(lo + abs(next()) % (hi - lo)) }
        let texts = stamps.map { Timestamp(microseconds: $0).storageText }
        XCTAssertEqual(texts[0], "0000-01-01T00:00:00.000000Z")
        XCTAssertEqual(texts[1], "9999-12-31T23:59:59.999999Z")
        XCTAssertEqual(texts[3], "1969-12-31T23:59:59.999999Z")
        XCTAssertEqual(texts[5], "2000-02-29T00:00:00.000000Z")
        for (t, text) in zip(stamps, texts) {
            XCTAssertEqual(text.utf8.count, 27, text)
            XCTAssertEqual(try Timestamp.parse(text).microseconds, t, text)
        }
        for k in 1..<texts.count { XCTAssertEqual(texts[k - 1] < texts[k], stamps[k - 1] < stamps[k]) }
    }

    func testFormsAndOrdering() throws {
        let a = try Timestamp.parse("2026-11-20T09:00:00+09:00")
        XCTAssertEqual(a.iso8601, "2026-11-20T00:00:00Z")
        XCTAssertEqual(try Timestamp.parse("2026-11-20 00:00:00.5Z").iso8601, "2026-11-20T00:00:00.500000Z")
        XCTAssertEqual(try Timestamp.parse("1763596800"), try Timestamp.parse("2025-11-20T00:00:00Z"))
        XCTAssertEqual(try Timestamp.parse("1763596800.25").microseconds, 1_763_596_800_250_000)
        XCTAssertEqual(try Timestamp.parse("-1.5").microseconds, -1_500_000)
        XCTAssertEqual(try Timestamp.parse("0.1234567").microseconds, 123_456, "past microseconds is dropped")
        XCTAssertEqual(try Timestamp.parse(" 1763596800 "), try Timestamp.parse("1763596800"))
        for bad in ["1.2.3", "-", "--1", "1-2", "1234567890123", "1 2", "1e", "e9"] {
            XCTAssertThrowsError(try Timestamp.parse(bad), bad)
        }
        // Any decimal, as every other number is read.
        for (text, us) in [("1.", 1_000_000), (".5", 500_000), ("+5", 5_000_000), ("1e9", 1_000_000_000_000_000)] as [(String, Int64)] {
            XCTAssertEqual(try Timestamp.parse(text).microseconds, us, text)
        }
        XCTAssertEqual(try Timestamp.parse("2026-11-20T09:00:00+0900"), a)
        XCTAssertLessThan(try Timestamp.parse("2026-11-20T08:59:59.999999+09:00"), a)
        XCTAssertThrowsError(try Timestamp.parse("2026-11-20T09:00:00")) { e in
            XCTAssertTrue("\(e)".contains("no UTC offset"))
        }
        XCTAssertThrowsError(try Timestamp.parse("2026-02-30T00:00:00Z"))
        XCTAssertThrowsError(try Timestamp.parse(""))
    }

    func testCivilDateRoundTrip() {
        for days in stride(from: -800_000, to: 800_000, by: 997) {
            let (y, m, d) = CivilDate.fromDays(Int64(days))
            XCTAssertEqual(CivilDate.toDays(y, m, d), days)
        }
    }
}

final class SpatiaLiteBlobTests: XCTestCase {
    func testRoundTripAndErrors() throws {
        let poly = Polygon([Ring([LonLat(lon: 1, lat: 2), LonLat(lon: 3, lat: 2), LonLat(lon: 3, lat: 4), LonLat(lon: 1, lat: 2)])])
        let blob = SpatiaLiteBlob.encodeMultiPolygon([poly, poly])
        let back = try blob.withUnsafeBytes { try SpatiaLiteBlob.decodeAreal($0) }
        XCTAssertEqual(back.srid, 4326)
        XCTAssertEqual(back.polygons, [poly, poly])
        for cut in [1, 10, 44, blob.count - 1] {
            XCTAssertThrowsError(try Array(blob.prefix(cut)).withUnsafeBytes { try SpatiaLiteBlob.decodeAreal($0) }, "truncated at \(cut)")
        }
        var huge = blob
        huge[47] = 0xFF; huge[48] = 0xFF; huge[49] = 0xFF; huge[50] = 0x7F   // absurd polygon count
        XCTAssertThrowsError(try huge.withUnsafeBytes { try SpatiaLiteBlob.decodeAreal($0) })
        let circle = CircleBlob.encode(Circle(center: LonLat(lon: 139, lat: 35), radiusM: 10))
        XCTAssertEqual(circle.withUnsafeBytes { CircleBlob.decode($0) }?.radiusM, 10)
        XCTAssertThrowsError(try circle.withUnsafeBytes { try SpatiaLiteBlob.decodeAreal($0) })
    }
}

final class AreaDefinitionTests: XCTestCase {
    func feature(_ props: String, _ geometry: String = #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}"#) throws -> JSONValue {
        try JSONReader.parse(#"{"type":"Feature","properties":{"#+props+#"},"geometry":"# + geometry + "}")
    }

    func testFieldsAndGroupsAndRoundTrip() throws {
        let f = try feature(#""area_id":"A1","in_confirm_count":3,"valid_from":"2026-01-01T00:00:00+09:00","timezone":"Asia/Tokyo","shop":"x""#)
        let a = try GeoJSONArea.area(from: f, group: "G")
        XCTAssertEqual(a.areaId, "G#A1")
        XCTAssertEqual(a.inConfirmCount, 3)
        XCTAssertEqual(a.validFrom?.iso8601, "2025-12-31T15:00:00Z")
        XCTAssertEqual(a.properties.map(\.0), ["shop"])
        XCTAssertEqual(try GeoJSONArea.area(from: GeoJSONArea.feature(for: a)), a)
        let circle = try GeoJSONArea.area(from: feature(#""area_id":"C","radius_m":150"#, #"{"type":"Point","coordinates":[139.7,35.6]}"#))
        XCTAssertEqual(circle.shape, .circle(Circle(center: LonLat(lon: 139.7, lat: 35.6), radiusM: 150)))
    }

    func testBadInputNamesTheField() throws {
        let cases: [(String, String, String)] = [
            (#""area_id":"A","in_confirm_count":0"#, #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}"#, "properties.in_confirm_count"),
            (#""area_id":"A","in_accuracy_max_m":-1"#, #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}"#, "properties.in_accuracy_max_m"),
            (#""area_id":"A","timezone":"Mars/Olympus""#, #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}"#, "properties.timezone"),
            (#""area_id":"A""#, #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}"#, "geometry.coordinates[0]"),
            (#""area_id":"A""#, #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}"#, "geometry.coordinates[0]"),
            (#""area_id":"A""#, #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,95],[0,0]]]}"#, "geometry.coordinates[0][2]"),
            (#""area_id":"A""#, #"{"type":"LineString","coordinates":[[0,0],[1,0]]}"#, "geometry.type"),
            (#""area_id":"A""#, #"{"type":"Point","coordinates":[0,0]}"#, "properties.radius_m"),
            (#""area_id":"A","valid_from":"2026-01-01T00:00:00""#, #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}"#, "properties.valid_from"),
            (#""name":"no id""#, #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}"#, "properties.area_id"),
        ]
        for (props, geometry, field) in cases {
            XCTAssertThrowsError(try GeoJSONArea.area(from: feature(props, geometry)), props) { e in
                XCTAssertEqual((e as? InputError)?.field, field, "\(e)")
            }
        }
    }

    func testConditionText() throws {
        let c = try ConditionText.condition(["condition_id": "7", "area_id": "A", "timing": "dwell", "dwell_s": "600",
                                             "weekdays": "Mon,Sat", "start_time": "22:00", "end_time": "06:00"])
        XCTAssertEqual(c.timing, .DWELL)
        XCTAssertEqual(c.weekdays?.description, "Mon,Sat")
        XCTAssertEqual(c.startMinute, 22 * 60)
        XCTAssertThrowsError(try ConditionText.condition(["condition_id": "1", "area_id": "A", "timing": "IN", "start_time": "25:00"]))
        XCTAssertThrowsError(try ConditionText.condition(["condition_id": "1", "area_id": "A", "timing": "DWELL"]))
        XCTAssertThrowsError(try ConditionText.condition(["condition_id": "1", "area_id": "A", "timing": "IN", "weekdays": "Funday"]))
    }
}

final class CSVTests: XCTestCase {
    /// Every row of `text`, fed to the reader in chunks of `size` bytes.
    func rows(_ text: [UInt8], chunk size: Int) throws -> [[String]] {
        var at = 0
        var reader = CSVReader(chunks: {
            guard at < text.count else { return nil }
            defer { at += size }
            return Array(text[at..<min(text.count, at + size)])
        })
        var out: [[String]] = []
        while let r = try reader.readRow() { out.append(r) }
        return out
    }

    /// Plain fields are cut straight from a chunk; quotes, CRs and chunk ends
    /// go byte by byte. Both must read the same rows however the file is cut.
    func testRowsDoNotDependOnHowTheFileIsChunked() throws {
        let text = Array("\u{FEFF}id,ts,lat\r\na,1,35.5\n\"b,\"\"q\"\"\",2,\n,,\r\nc\rd,é,\"x\r\ny\"\n\nlast,no,newline".utf8)
        let expected: [[String]] = [["id", "ts", "lat"], ["a", "1", "35.5"], ["b,\"q\"", "2", ""], ["", "", ""],
                                    ["c"], ["d", "é", "x\r\ny"], [""], ["last", "no", "newline"]]
        for size in [1, 2, 3, 5, 7, 11, text.count] {
            XCTAssertEqual(try rows(text, chunk: size), expected, "chunks of \(size) bytes")
        }
    }

    /// A lone CR ends a line as LF and CRLF do (CR-only files come from
    /// spreadsheets on the Mac); a CR inside quotes stays in the field, and
    /// lines are counted the same way for messages.
    func testLoneCarriageReturnEndsALine() throws {
        let text = Array("id,ts\ra,1\r\rb,\"x\ry\"\r\nc,3\n\"open\r".utf8)
        let expected: [[String]] = [["id", "ts"], ["a", "1"], [""], ["b", "x\ry"], ["c", "3"]]
        for size in [1, 2, 3, 5, text.count] {
            var given = 0
            var reader = CSVReader(chunks: {
                guard given < text.count else { return nil }
                defer { given += size }
                return Array(text[given..<min(given + size, text.count)])
            })
            var out: [[String]] = []
            XCTAssertThrowsError(try { while let r = try reader.readRow() { out.append(r) } }()) { e in
                XCTAssertTrue("\(e)".contains("unterminated quoted field") && "\(e)".contains("line 7"), "\(e)")
            }
            XCTAssertEqual(out, expected, "chunks of \(size) bytes")
        }
        // Plain lines, read straight from the chunk, end at a lone CR too.
        var given = false
        var reader = CSVReader(chunks: { if given { return nil }; given = true; return Array("h\r1,2\r3,4\r\n5\r".utf8) })
        XCTAssertEqual(try reader.readRow(), ["h"])
        var plain: [String] = []
        while let line = reader.withPlainLine({ String(decoding: $0, as: UTF8.self) }) { plain.append(line) }
        XCTAssertEqual(plain, ["1,2", "3,4"])
        XCTAssertEqual(reader.line, 4)
        XCTAssertEqual(try reader.readRow(), ["5"])
        XCTAssertNil(try reader.readRow())
    }

    func testBadInputSaysWhere() {
        for (text, message) in [("a,b\n\"open,c\n", "line 2: unterminated quoted field 1"), ("a,b\nx,y\"z\n", "line 2: stray quote inside unquoted field 2"),
                                ("a,b\nx, \"y,z\"\n", "line 2: field 2 has spaces before its opening quote"),
                                ("a,b\nx,\"ab\"c\n", "line 2: field 2, quoted, goes on after its closing quote: a field is quoted whole"),
                                ("a,b\n\"ab\" ,c\n", "line 2: field 1, quoted, goes on after its closing quote"),
                                ("a,b\n\"a\\\"b\",c\n", "not after a backslash")] {
            XCTAssertThrowsError(try rows(Array(text.utf8), chunk: 4)) { e in XCTAssertTrue("\(e)".contains(message), "\(e)") }
        }
        // Invalid UTF-8 in a plain field, found by the fast path (whole chunk) and by the byte loop (1-byte chunks).
        let bad: [UInt8] = Array("a,b\nok,".utf8) + [0xFF, 0x41] + Array(",z\n".utf8)
        for size in [1, bad.count] {
            XCTAssertThrowsError(try rows(bad, chunk: size)) { e in
                XCTAssertTrue("\(e)".contains("field 2 is not valid UTF-8") && "\(e)".contains("line 2"), "\(e)")
            }
        }
    }
}

final class DecimalTextTests: XCTestCase {
    /// Whatever it accepts, it reads to the same double as `Double(String)`
    /// (glibc's correctly rounded strtod), bit for bit; what it declines,
    /// `Double(String)` still reads.
    func testSameBitsAsDoubleFromString() {
        var seed: UInt64 = 21
        func rnd(_ n: UInt64) -> UInt64 { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return (seed >> 11) % n }
        var texts = ["0", "-0", "+5", "5.", ".5", "-.5", "0.0", "00012.50", "90", "-180", "179.9999999", "35.4998264",
                     "139.6245033", "1e5", "inf", "nan", "", ".", "-", "1.2.3", " 5", "5 ", "0x1p3", "123456789012345",
                     "1234567890123456", "0.000000000000000000001", "0.0000000000000000000001", "9007199254740993",
                     "999999999999999.9", "4.35", "0.1", "0.3", "2.675"]
        for _ in 0..<200_000 {
            let whole = rnd(1_000_000), digits = Int(rnd(12))
            var frac = ""
            for _ in 0..<digits { frac += String(rnd(10)) }
            let sign = rnd(3) == 0 ? "-" : ""
            texts.append(sign + String(whole) + (digits > 0 || rnd(2) == 0 ? "." + frac : ""))
        }
        var read = 0
        for t in texts {
            if let fast = DecimalText.parse(t) {
                read += 1
                guard let slow = Double(t) else { XCTFail("'\(t)' read as \(fast), Double(String) refuses it"); continue }
                XCTAssertEqual(fast.bitPattern, slow.bitPattern, "'\(t)': \(fast) against \(slow)")
            }
        }
        XCTAssertGreaterThan(read, 150_000)
        // An exponent, words, spaces, 16 significant digits, 23 decimals: left to Double(String).
        for t in ["1e5", "inf", " 5", "1234567890123456", "0.00000000000000000000001", "1.2.3", ""] { XCTAssertNil(DecimalText.parse(t), t) }
    }

    /// Ids are told apart by their bytes, as SQLite's BINARY collation does.
    func testSameUTF8IsByteEquality() {
        let long = String(repeating: "subject-", count: 4)  // past the 15 bytes a small string holds
        let pairs: [(String, String, Bool)] = [
            ("S00001", "S00001", true), ("S00001", "S00002", false), ("S0000", "S00001", false), ("", "", true), ("", "a", false),
            ("\u{e9}", "e\u{301}", false),  // canonically equivalent (Swift's ==), two ids to SQLite
            (long + "a", long + "a", true), (long + "a", long + "b", false), (long, long + "\u{0}", false),
        ]
        for (a, b, same) in pairs {
            XCTAssertEqual(a.hasSameUTF8(as: b), same, "\(a.debugDescription) vs \(b.debugDescription)")
            XCTAssertEqual(b.hasSameUTF8(as: a), same)
            XCTAssertEqual(a.utf8.elementsEqual(b.utf8), same, "the reference")
        }
    }
}
