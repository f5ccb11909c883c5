import XCTest
import GeofenceCore
@testable import GeofenceSQL

/// A fixes CSV is read two ways: a plain line (ASCII, no quotes) from its
/// bytes (`FixLines.plainRow`), anything else by `CSVReader.readRow`. Quoting
/// every field of a line changes nothing CSV says about it but sends it the
/// general way, so each line below, plain and quoted, must give the same row.
final class FixSourcesTests: DatabaseTestCase {
    let lines = [
        "S1,1763600514.291,35.4998264,140.4213013,12.2",
        "S1,2026-11-20T10:00:00.123456Z,35.5,140.5,3",
        "S1,2026-11-20T10:00:00+09:00,35.5,140.5,3",
        "S1,2026-11-20 10:00:00Z,35.5,140.5,3",
        "S1,2026-11-20T10:00:60.000000Z,35.5,140.5,3",
        "  S 2 ,\t1763600514 , 35.5 ,140.5\t, 0 ",
        "  S 2 , 1763600514 , 35.5 ,140.5 , 0 ",
        "S3,-12.5,35.5,140.5,3",
        "S3,1763600514.291,1e1,140.5,3",
        "S3,1763600514.291,+35.5,140.5,3",
        "S3,1763600514.291,35.5,140.5,inf",
        "S3,1763600514.291,35.5,140.5,-1",
        "S3,1763600514.291,95,140.5,3",
        "S3,1763600514.291,35.5,abc,3",
        "S3,1763600514.291,35.5,,3",
        ",1763600514.291,35.5,140.5,3",
        "S3,,35.5,140.5,3",
        "S3,not a time,35.5,140.5,3",
        "S3,1763600514.,35.5,140.5,3",
        "S3,1763600514.291,35.5,140.5",
        "S3,1763600514.291,35.5,140.5,3,extra",
        "",
        "   ",
    ]

    func rows(_ name: String, _ body: [String], end: String) throws -> [Judgement.Row] {
        let path = write(name, (["subject_id,ts,lat,lon,accuracy_m"] + body).joined(separator: end) + end)
        return Array(try FixSources.file(path))
    }

    func testPlainLinesReadAsTheGeneralReaderReadsThem() throws {
        // Every field quoted as it is: a subject is as written either way (the next test).
        let quoted = lines.map { line in
            line.isEmpty ? line : line.split(separator: ",", omittingEmptySubsequences: false)
                .map { "\"\($0)\"" }
                .joined(separator: ",")
        }
        // Every line end a CSV file may have: LF, CRLF, and the lone CR of old Mac files.
        for end in ["\n", "\r\n", "\r"] {
            let plain = try rows("plain.csv", lines, end: end), general = try rows("quoted.csv", quoted, end: end)
            XCTAssertEqual(plain.count, lines.count)
            XCTAssertEqual(general.count, lines.count)
            for (k, (p, g)) in zip(plain, general).enumerated() {
                let line = "line \(k + 2) '\(lines[k])'"
                XCTAssertNil(p.readError, line)
                XCTAssertEqual(p.subjectId, g.subjectId, line)
                XCTAssertEqual(p.time, g.time, line)
                XCTAssertEqual(p.validated.map { $0 }, g.validated.map { $0 }, line)
                XCTAssertEqual(p.problem, g.problem, line)
            }
            // The common lines did take the plain way (a lone CR ends one, too): their time came parsed.
            XCTAssertNotNil(plain[0].parsedTs)
            XCTAssertNil(general[0].parsedTs)
        }
    }

    /// A subject is the id exactly as written, quoted or not, as RFC 4180
    /// and the tools that write CSV (Python's csv, pandas, DuckDB, Excel,
    /// which quote ` a ` only when asked) mean it: ` a ` and `a` are two
    /// subjects, as `gf_check` would see them. Numbers and times read the
    /// same with or without spaces at their ends.
    func testASubjectKeepsItsSpaces() throws {
        let got = try rows("spaces.csv", [
            "\" a \",2026-11-20T10:00:00Z,35.5,140.5,3",
            " a ,2026-11-20T10:00:01Z,35.5,140.5,3",
            "\"b\",\" 2026-11-20T10:00:02Z \",\" 35.5\",140.5,3",
            "\"  \",2026-11-20T10:00:03Z,35.5,140.5,3",
        ], end: "\n")
        XCTAssertEqual(got.map(\.subjectId), [" a ", " a ", "b", "  "])
        XCTAssertEqual(try got[2].validated.get().position.lat, 35.5)
        XCTAssertEqual(try got[2].validated.get().ts.microseconds - got[0].validated.get().ts.microseconds, 2_000_000)
    }
}
