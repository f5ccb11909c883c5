/// One subject's judgement state as a compact, canonical JSON text: what the
/// catalog stores per subject (gf_subject_state.record) and what a
/// distributed task carries between machines. Its format, field by field:
/// docs/subject-record.md.
///
///     {"v":1,"last":{"ts":"2024-05-01T08:00:00.000000Z","lat":35.681,"lon":139.767,"acc":12.0},"judged":41,
///      "stays":[{"area":"A1","phase":"INSIDE","in":7,"out":0,"entered":"2024-05-01T07:40:00.000000Z","dwell":[3]}],
///      "days":[[5,"2024-05-01"]]}
///
/// Canonical: one state has one text. Members come in the order above;
/// `last` is null for a subject never judged; a stay's `entered` and `dwell`
/// are left out when there is none; stays come in UTF-8 byte order of their
/// area_id (SQLite's text order); days in condition id order. Numbers are
/// exact: streaks, counts and ids are integers, a coordinate or accuracy is
/// written as the shortest text that reads back to the same Double (SQLite's
/// json_extract reads it back to the same bits too), times are the storage
/// text (UTC, microseconds) the catalog has always stored. No whitespace.
///
/// The subject id is not in the record: it is the record's key (the row's
/// subject_id). Decoding refuses a record this engine would not write (not
/// JSON, a member of the wrong type, a negative streak, an entry after the
/// last fix, …) with an error naming the subject and the member.
public enum SubjectRecord {
    /// The format's version (`"v"`); a record of another version is refused.
    public static let version = 1

    /// The canonical text of `state`. A stay's `dwell` keeps its order
    /// (the order the DWELL conditions were spent in). Written byte by byte
    /// into one buffer (`encoded`, EncodedRecord.swift).
    public static func encode(_ state: SubjectState) -> String { encoded(state).text }

    /// The state `text` holds for `subject`; throws `InputError` naming the
    /// subject and what is wrong when the text is not a record this engine
    /// writes. Any member order is read; members not in the format are refused.
    /// `stored`: the text is the catalog's (a refusal says how to clear it),
    /// not one being imported (a refusal names only the record).
    public static func decode(_ text: String, subject: String, stored: Bool = true) throws -> SubjectState {
        let value: JSONValue
        do { value = try JSONReader.parse(text) } catch {
            throw refusal(subject, "is not JSON (\(error))", stored: stored)
        }
        return try decode(value: value, subject: subject, stored: stored)
    }

    /// The state a record already parsed as JSON holds (`decode(_:subject:stored:)`):
    /// for a reader of lines that hold a record among other members (`geofence state import`).
    public static func decode(value: JSONValue, subject: String, stored: Bool = true) throws -> SubjectState {
        let r = Reader(subject: subject, stored: stored)
        let top = try r.object(value, "a top level", allowed: ["v", "last", "judged", "stays", "days"])
        guard let v = top["v"], try r.integer(v, "v", in: 0...Int64(Int32.max)) == Int64(version) else {
            throw r.refuse("has no \"v\":\(version) (the only version of the record this geofence reads)")
        }
        var state = SubjectState(subjectId: subject)
        state.judgedFixes = Int(try r.integer(r.required(top, "judged"), "judged", in: 0...Reader.maxCount))
        if let last = top["last"], last != .null {
            let f = try r.object(last, "last", allowed: ["ts", "lat", "lon", "acc"])
            state.lastFix = Fix(subjectId: subject, ts: try r.time(r.required(f, "last.ts"), "last.ts"),
                                lat: try r.double(r.required(f, "last.lat"), "last.lat", in: -90...90),
                                lon: try r.double(r.required(f, "last.lon"), "last.lon", in: -180...180),
                                accuracy: try r.double(r.required(f, "last.acc"), "last.acc", in: 0...Double.greatestFiniteMagnitude))
        }
        if let stays = top["stays"] {
            guard case .array(let items) = stays else { throw r.refuse("has \"stays\" of type \(stays.typeName), not an array") }
            for (i, item) in items.enumerated() {
                let (area, stay) = try r.stay(item, "stays[\(i)]", lastFix: state.lastFix)
                guard state.stays[area] == nil else { throw r.refuse("has two stays of area \(Echo.quoted(area))") }
                state.stays[area] = stay
            }
        }
        if let days = top["days"] {
            guard case .array(let items) = days else { throw r.refuse("has \"days\" of type \(days.typeName), not an array") }
            for (i, item) in items.enumerated() {
                guard case .array(let pair) = item, pair.count == 2 else {
                    throw r.refuse("has days[\(i)] that is not a pair [condition_id, \"YYYY-MM-DD\"]")
                }
                let id = try r.integer(pair[0], "days[\(i)][0]", in: Int64.min...Int64.max)
                guard case .string(let text) = pair[1], let day = CivilDate.parseStored(text) else {
                    throw r.refuse("has days[\(i)][1] that is not a date YYYY-MM-DD")
                }
                guard state.lastNotifiedDay[id] == nil else { throw r.refuse("has two days of condition \(id)") }
                state.lastNotifiedDay[id] = day
            }
        }
        return state
    }

    static func refusal(_ subject: String, _ what: String, stored: Bool) -> InputError {
        InputError("the state record of subject \(Echo.quoted(subject)) \(what): not a record this geofence writes"
                   + (stored ? " (`geofence reset DB --subject ID` clears it)" : ""))
    }

    /// Reads the members of one record, each refused with its name.
    struct Reader {
        /// The largest count of fixes or streak a record may hold (sums of such counts cannot overflow).
        static let maxCount = Int64(1) << 53
        let subject: String
        /// Whether the record is the catalog's (`decode`'s `stored`).
        let stored: Bool

        /// The refusal of this record: `what` is wrong with it.
        func refuse(_ what: String) -> InputError { refusal(subject, what, stored: stored) }

        /// The members of object `v` (called `name` in a refusal), each of them one of `allowed`.
        func object(_ v: JSONValue, _ name: String, allowed: Set<String>) throws -> [String: JSONValue] {
            guard case .object(let members) = v else { throw refuse("has \(name) of type \(v.typeName), not an object") }
            var out: [String: JSONValue] = [:]
            for (k, m) in members {
                guard allowed.contains(k) else { throw refuse("has a member \(Echo.quoted(k)) in \(name), which the format does not have") }
                out[k] = m
            }
            return out
        }

        /// The member `name` ends with (a path such as "last.ts"), refused when absent.
        func required(_ members: [String: JSONValue], _ name: String) throws -> JSONValue {
            guard let v = members[String(name.split(separator: ".").last!)] else { throw refuse("has no \"\(name)\"") }
            return v
        }

        /// An integer written without a fraction or exponent, within `range`.
        func integer(_ v: JSONValue, _ name: String, in range: ClosedRange<Int64>) throws -> Int64 {
            guard case .number(let text) = v, let n = Int64(text), range.contains(n) else {
                let shown = v.plainText.map { Echo.plain($0) } ?? "of type \(v.typeName)"
                throw refuse("has \"\(name)\" \(shown), not an integer from \(range.lowerBound) to \(range.upperBound)")
            }
            return n
        }

        /// A finite number within `range` (what a judged fix may hold: Fix.isValid),
        /// read to the nearest Double (the writer's text reads back to its own bits).
        func double(_ v: JSONValue, _ name: String, in range: ClosedRange<Double>) throws -> Double {
            guard case .number(let text) = v, let d = Double(text), d.isFinite, range.contains(d) else {
                let bounds = range.upperBound == .greatestFiniteMagnitude ? "of \(range.lowerBound) or more" : "from \(range.lowerBound) to \(range.upperBound)"
                throw refuse("has \"\(name)\" \(v.plainText.map { Echo.plain($0) } ?? "of type \(v.typeName)"), not a finite number \(bounds)")
            }
            return d
        }

        /// A time, as a string any of the engine's time forms reads (the record writes the storage text).
        func time(_ v: JSONValue, _ name: String) throws -> Timestamp {
            guard case .string(let text) = v, let t = try? Timestamp.parse(text) else {
                throw refuse("has \"\(name)\" \(v.plainText.map { Echo.quoted($0) } ?? "of type \(v.typeName)"), not a time")
            }
            return t
        }

        /// One stay: its area_id and state. A stay needs a last fix (its
        /// streaks count the subject's judged fixes) and an entry no later than it.
        func stay(_ v: JSONValue, _ name: String, lastFix: Fix?) throws -> (String, StayState) {
            let m = try object(v, name, allowed: ["area", "phase", "in", "out", "entered", "dwell"])
            guard case .string(let area)? = m["area"] else { throw refuse("has \(name) without an \"area\" string") }
            guard let last = lastFix else { throw refuse("has a stay of area \(Echo.quoted(area)) but no last fix (\"last\" is null)") }
            var s = StayState()
            guard case .string(let phase)? = m["phase"], let p = StayState.Phase(rawValue: phase) else {
                throw refuse("has \(name).phase that is not \"UNKNOWN\", \"INSIDE\" or \"OUTSIDE\"")
            }
            s.phase = p
            s.inStreak = Int(try integer(required(m, "\(name).in"), "\(name).in", in: 0...Self.maxCount))
            s.outStreak = Int(try integer(required(m, "\(name).out"), "\(name).out", in: 0...Self.maxCount))
            if let e = m["entered"], e != .null {
                let t = try time(e, "\(name).entered")
                guard t <= last.ts else {
                    throw refuse("has \(name).entered \(t.iso8601), after its last judged fix (\(last.ts.iso8601))")
                }
                s.enteredAt = t
            }
            if let d = m["dwell"] {
                guard case .array(let ids) = d else { throw refuse("has \(name).dwell of type \(d.typeName), not an array") }
                s.dwellSpent = try ids.enumerated().map { try integer($1, "\(name).dwell[\($0)]", in: Int64.min...Int64.max) }
            }
            return (area, s)
        }
    }
}

extension StayState.Phase {
    /// The phase as a record writes it (its raw value), as static bytes.
    var recordText: StaticString {
        switch self {
        case .unknown: "UNKNOWN"
        case .inside: "INSIDE"
        case .outside: "OUTSIDE"
        }
    }
}
