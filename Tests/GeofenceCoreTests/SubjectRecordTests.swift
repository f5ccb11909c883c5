import XCTest
@testable import GeofenceCore

/// The per-subject record (SubjectRecord, docs/subject-record.md): one text
/// per state, read back to the same state, and refused with the subject named
/// when it is not what this engine writes.
final class SubjectRecordTests: XCTestCase {
    func time(_ text: String) throws -> Timestamp { try Timestamp.parse(text) }

    /// A state with every kind of member: a fix with awkward doubles, stays
    /// INSIDE (entered, DWELL spent), with an inside streak under way, and OUTSIDE,
    /// area ids needing escapes and out of ASCII order, two days.
    func sample() throws -> SubjectState {
        var s = SubjectState(subjectId: "u1")
        s.lastFix = Fix(subjectId: "u1", ts: try time("2024-05-01T08:00:00.000123Z"), lat: 0.1 + 0.2, lon: -139.76700000000002,
                        accuracy: 12)
        s.judgedFixes = 41
        var inside = StayState()
        inside.phase = .inside; inside.inStreak = 7; inside.enteredAt = try time("2024-05-01T07:40:00Z"); inside.dwellSpent = [9, 3]
        var under = StayState()
        under.phase = .outside; under.inStreak = 1
        var outside = StayState()
        outside.phase = .outside; outside.outStreak = 2
        s.stays["é\"q"] = inside
        s.stays["A1"] = under
        s.stays["Z"] = outside
        s.lastNotifiedDay = [12: CivilDate.parseStored("2024-05-01")!, 5: CivilDate.parseStored("2024-04-30")!]
        return s
    }

    func testRoundTripGivesTheSameStateAndTheSameText() throws {
        let s = try sample()
        let text = SubjectRecord.encode(s)
        let back = try SubjectRecord.decode(text, subject: "u1")
        XCTAssertEqual(back, s)
        XCTAssertEqual(back.lastFix?.position.lat.bitPattern, s.lastFix?.position.lat.bitPattern)
        XCTAssertEqual(back.lastFix?.position.lon.bitPattern, s.lastFix?.position.lon.bitPattern)
        XCTAssertEqual(SubjectRecord.encode(back), text)
        let never = SubjectState(subjectId: "n")
        XCTAssertEqual(try SubjectRecord.decode(SubjectRecord.encode(never), subject: "n"), never)
    }

    /// The canonical bytes: member order, stays in UTF-8 order of area_id,
    /// days by condition id, doubles exact and always with a fraction.
    func testCanonicalBytes() throws {
        XCTAssertEqual(SubjectRecord.encode(try sample()), #"""
            {"v":1,"last":{"ts":"2024-05-01T08:00:00.000123Z","lat":0.30000000000000004,"lon":-139.76700000000002,"acc":12.0},\#
            "judged":41,"stays":[{"area":"A1","phase":"OUTSIDE","in":1,"out":0},{"area":"Z","phase":"OUTSIDE","in":0,"out":2},\#
            {"area":"é\"q","phase":"INSIDE","in":7,"out":0,"entered":"2024-05-01T07:40:00.000000Z","dwell":[9,3]}],\#
            "days":[[5,"2024-04-30"],[12,"2024-05-01"]]}
            """#)
        XCTAssertEqual(SubjectRecord.encode(SubjectState(subjectId: "n")), #"{"v":1,"last":null,"judged":0,"stays":[],"days":[]}"#)
    }

    /// A record's days are written digit by digit; the text is formatDate's,
    /// at every day of years 1969-2100 and at both ends of the years it writes.
    func testDaysWrittenAsBytesAreFormatDatesText() {
        let edges = [CivilDate.toDays(0, 1, 1), CivilDate.toDays(9999, 12, 31)]
        let days = Array(CivilDate.toDays(1969, 1, 1)...CivilDate.toDays(2100, 12, 31)) + edges.flatMap { [$0 - 1, $0, $0 + 1] }
        for day in days {
            var out: [UInt8] = []
            JSONBytes.date(day, &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), ConditionDefinition.formatDate(day), "day \(day)")
        }
    }

    /// A record in another member order reads as the same state (only the writing is canonical).
    func testMemberOrderIsNotRequiredToRead() throws {
        let text = #"{"days":[],"stays":[{"out":0,"in":2,"phase":"UNKNOWN","area":"a"}],"judged":3,"last":{"acc":1.5,"lon":2.0,"lat":1.0,"ts":"2024-01-01T00:00:00.000000Z"},"v":1}"#
        let s = try SubjectRecord.decode(text, subject: "u")
        XCTAssertEqual(s.stays["a"]?.inStreak, 2)
        XCTAssertEqual(s.judgedFixes, 3)
    }

    func refusal(_ text: String, _ expected: String, line: UInt = #line) {
        XCTAssertThrowsError(try SubjectRecord.decode(text, subject: "bad one"), line: line) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("subject 'bad one'"), message, line: line)
            XCTAssertTrue(message.contains(expected), "\(message) lacks \(expected)", line: line)
        }
    }

    /// A record being imported is not the catalog's: its refusal does not offer to clear a stored one.
    func testARecordNotStoredIsRefusedWithoutTheResetHint() {
        XCTAssertThrowsError(try SubjectRecord.decode(#"{"v":2}"#, subject: "u", stored: false)) { error in
            XCTAssertFalse("\(error)".contains("geofence reset"), "\(error)")
        }
        XCTAssertThrowsError(try SubjectRecord.decode(#"{"v":2}"#, subject: "u")) { error in
            XCTAssertTrue("\(error)".contains("geofence reset"), "\(error)")
        }
    }

    func testHostileRecordsAreRefusedNamingTheSubject() {
        let last = #""last":{"ts":"2024-01-01T00:00:00.000000Z","lat":1.0,"lon":2.0,"acc":3.0}"#
        refusal("{", "is not JSON")
        refusal("[]", "has a top level of type array, not an object")
        refusal(#"{"v":2,"last":null,"judged":0}"#, #"no "v":1"#)
        refusal(#"{"last":null,"judged":0}"#, #"no "v":1"#)
        refusal(#"{"v":1,"last":null}"#, #"no "judged""#)
        refusal(#"{"v":1,"last":null,"judged":"3"}"#, #""judged" 3, not an integer"#)
        refusal(#"{"v":1,"last":null,"judged":-1}"#, #""judged" -1, not an integer"#)
        refusal(#"{"v":1,"last":null,"judged":1,"extra":1}"#, #"member 'extra'"#)
        refusal(#"{"v":1,"last":{"ts":"yesterday","lat":1.0,"lon":2.0,"acc":3.0},"judged":1}"#, #""last.ts" 'yesterday', not a time"#)
        refusal(#"{"v":1,"last":{"ts":"2024-01-01T00:00:00Z","lat":"x","lon":2.0,"acc":3.0},"judged":1}"#, #""last.lat" x, not a finite number"#)
        refusal(#"{"v":1,"last":null,"judged":1,"stays":[{"area":"a","phase":"INSIDE","in":1,"out":0}]}"#, "no last fix")
        // Numbers no judged fix holds (Fix.isValid): a record of them is not one this engine writes.
        refusal(#"{"v":1,"last":{"ts":"2024-01-01T00:00:00Z","lat":90.5,"lon":2.0,"acc":3.0},"judged":1}"#, #""last.lat" 90.5, not a finite number from -90.0 to 90.0"#)
        refusal(#"{"v":1,"last":{"ts":"2024-01-01T00:00:00Z","lat":1.0,"lon":1e999,"acc":3.0},"judged":1}"#, #""last.lon" 1e999, not a finite number"#)
        refusal(#"{"v":1,"last":{"ts":"2024-01-01T00:00:00Z","lat":1.0,"lon":2.0,"acc":-0.5},"judged":1}"#, #""last.acc" -0.5, not a finite number of 0.0 or more"#)
        refusal(#"{"v":1,\#(last),"judged":1,"stays":[{"area":"a","phase":"INSIDE","in":-2,"out":0}]}"#, #""stays[0].in" -2"#)
        refusal(#"{"v":1,\#(last),"judged":1,"stays":[{"area":"a","phase":"IN","in":1,"out":0}]}"#, "stays[0].phase")
        refusal(#"{"v":1,\#(last),"judged":1,"stays":[{"area":"a","phase":"INSIDE","in":1,"out":0,"entered":"2024-01-02T00:00:00Z"}]}"#,
                "stays[0].entered 2024-01-02T00:00:00Z, after its last judged fix")
        refusal(#"{"v":1,\#(last),"judged":1,"stays":[{"area":"a","phase":"OUTSIDE","in":0,"out":1},{"area":"a","phase":"OUTSIDE","in":0,"out":1}]}"#,
                "two stays of area 'a'")
        refusal(#"{"v":1,\#(last),"judged":1,"stays":[{"area":"a","phase":"INSIDE","in":1,"out":0,"dwell":[1.5]}]}"#, "stays[0].dwell[0]")
        refusal(#"{"v":1,\#(last),"judged":1,"stays":{}}"#, #""stays" of type object"#)
        refusal(#"{"v":1,\#(last),"judged":1,"days":[[1,"2024-02-30"]]}"#, "days[0][1]")
        refusal(#"{"v":1,\#(last),"judged":1,"days":[[1]]}"#, "days[0] that is not a pair")
    }

    /// A record written from the one before (`SubjectRecord.encoded(_:reusing:)`)
    /// is the same text as one written afresh, along a random walk of states
    /// that lengthen stays, change their phase, entry and DWELLs, add and drop
    /// stays (ids needing escapes, not ASCII, prefixes of each other) and
    /// days; and from a record of another subject's stays, or one read back.
    func testARecordWrittenFromThePreviousOneIsTheSameText() throws {
        var rng = SplitMix(seed: 44)  // seeded, so a failing walk can be replayed
        let ids = ["A", "A1", "AB", "é\"q", "e\u{301}", "Z", "z\\", "\u{1F600}", "b\u{0}", "mid"]
        let times = [try time("2024-05-01T07:40:00Z"), try time("2024-05-01T07:41:00.5Z"), try time("1999-12-31T23:59:59.999999Z")]
        for _ in 0..<50 {
            var s = try sample()
            var last = SubjectRecord.encoded(s)
            XCTAssertEqual(last.text, SubjectRecord.encode(s))
            for step in 0..<60 {
                s.judgedFixes += 1
                for id in ids where Int.random(in: 0..<4, using: &rng) == 0 {
                    var stay = s.stays[id] ?? StayState()
                    switch Int.random(in: 0..<7, using: &rng) {
                    case 0: stay.inStreak += 1; stay.outStreak = 0
                    case 1: stay.outStreak += Int.random(in: 1...1_000_000, using: &rng); stay.inStreak = 0
                    case 2: stay.phase = [.inside, .outside, .unknown][Int.random(in: 0..<3, using: &rng)]
                    case 3: stay.enteredAt = Bool.random(using: &rng) ? times.randomElement(using: &rng) : nil
                    case 4: stay.dwellSpent = Bool.random(using: &rng) ? [] : [Int64.random(in: 1...9, using: &rng), 3]
                    case 5: s.stays[id] = nil; continue
                    default: s.lastNotifiedDay[Int64(step % 3)] = 20_000 + step
                    }
                    s.stays[id] = stay
                }
                let next = SubjectRecord.encoded(s, reusing: last)
                XCTAssertEqual(next.text, SubjectRecord.encode(s))
                last = next
            }
            var other = try sample()
            other.stays["A"] = StayState()
            XCTAssertEqual(SubjectRecord.encoded(other, reusing: last).text, SubjectRecord.encode(other))
            let readBack = EncodedRecord(readBack: last.text, state: s)
            XCTAssertEqual(SubjectRecord.encoded(s, reusing: readBack).text, last.text)
        }
    }
}
