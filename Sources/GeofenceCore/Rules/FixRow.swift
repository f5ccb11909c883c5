/// A fix as read from a table or a file, before validation: what every
/// reader of fixes makes (a CSV or NDJSON file, `FixLines`; a SQL table,
/// the SQL layer's `FixSources.table`), and what judgement and
/// `locate --fixes` take.
///
///     let row = FixRow(subject: .text("u1"), ts: .text("2026-11-20T08:00:00+09:00"),
///                      lat: .real(35.68), lon: .real(139.76), accuracy: .text("12.5"))
///     row.validated   // .success(Fix) or .failure(InvalidFix) with the reason
public struct FixRow {
    public var subjectId: String?
    public var ts: String?
    public var lat: Double?
    public var lon: Double?
    public var accuracy: Double?
    /// Set by a reader that could not make sense of the row: the fix is invalid for this reason.
    public var problem: String?
    /// The field `problem` is about, when it is one field's.
    public var problemField: FixField?
    /// Set by a reader that cannot go on (a CSV quote never closed, bytes
    /// that are not UTF-8, a read error): the batch fails with it, since
    /// the rows after it are lost, and its transaction keeps nothing.
    public var readError: Error?
    /// The time, when the reader parsed it already (`ts` is then nil).
    public var parsedTs: Timestamp?
    /// The time was written without an offset and read as local time in the
    /// feed's zone (`FixFeed.localZone`): a run says how many were.
    public var readAsLocalTime = false

    public init(subjectId: String?, ts: String?, lat: Double?, lon: Double?, accuracy: Double?, problem: String? = nil) {
        self.subjectId = subjectId; self.ts = ts; self.lat = lat; self.lon = lon; self.accuracy = accuracy; self.problem = problem
    }

    /// The row of a fix already validated (`requireValid`): validated again,
    /// it is the same fix, with no time parsed a second time.
    public init(_ fix: Fix) {
        self.init(subjectId: fix.subjectId, ts: nil, lat: fix.position.lat, lon: fix.position.lon, accuracy: fix.accuracy)
        parsedTs = fix.ts
    }

    /// A field as a reader found it.
    public enum Field {
        case null, integer(Int64), real(Double), text(String), blob
    }

    /// A row from its five fields. A number may come as text (CSV, or a
    /// text column): it is read as a decimal; anything else that is not a
    /// number makes the row invalid, the last bad field naming the problem.
    public init(subject: Field, ts: Field, lat: Field, lon: Field, accuracy: Field) {
        func text(_ f: Field) -> String? {
            switch f {
            case .text(let t): t
            case .integer(let i): String(i)
            case .real(let d): "\(d)"
            case .null, .blob: nil
            }
        }
        var time: String? { if case .real(let d) = ts { Timestamp.unixSecondsText(d) } else { text(ts) } }
        self.init(subjectId: text(subject), ts: time, lat: nil, lon: nil, accuracy: nil)
        if case .blob = subject { (problem, problemField) = ("subject_id is a BLOB, not text", .subject) }
        if case .blob = ts { (problem, problemField) = ("ts is a BLOB, not a time", .ts) }
        func number(_ name: FixField, _ f: Field) -> Double? {
            switch f {
            case .null: return nil
            case .integer(let i): return Double(i)
            case .real(let d): return d
            case .text(let t):
                if let d = DecimalText.parse(t) ?? NumberText.double(t.trimmingEdgeSpaces()) { return d }
                (problem, problemField) = ("\(name.column) \(Echo.quoted(String(t.prefix(40)))) is not a number", name)
                return nil
            case .blob:
                (problem, problemField) = ("\(name.column) is a BLOB, not a number", name)
                return nil
            }
        }
        self.lat = number(.lat, lat)
        self.lon = number(.lon, lon)
        self.accuracy = number(.accuracy, accuracy)
    }

    /// The fix, or why it is invalid (behaviour §2).
    public var validated: Result<Fix, InvalidFix> {
        if let problem { return .failure(InvalidFix(problem, field: problemField)) }
        if let parsedTs { return Fix.validated(subjectId: subjectId, ts: parsedTs, lat: lat, lon: lon, accuracy: accuracy) }
        return Fix.validated(subjectId: subjectId, time: ts, lat: lat, lon: lon, accuracy: accuracy)
    }

    /// The fix, or the input error a door that judges one fix at a time
    /// (gf_check, `BatchEngine.judgeOne`) refuses an invalid one with.
    public func requireValid() throws -> Fix {
        switch validated {
        case .failure(let why): throw InputError("invalid fix: \(why.reason)")
        case .success(let fix): return fix
        }
    }

    /// The fix, if the row is a valid one: `validated` without making a
    /// `Result` (and its reason) per row, for a batch's common case.
    public var validFix: Fix? {
        guard problem == nil else { return nil }
        guard let parsedTs else { return try? validated.get() }
        guard let subjectId, let lat, let lon, let accuracy,
              Fix.isValid(subjectId: subjectId, lat: lat, lon: lon, accuracy: accuracy) else { return nil }
        return Fix(subjectId: subjectId, ts: parsedTs, lat: lat, lon: lon, accuracy: accuracy)
    }

    /// The row's time for an explanation, if it has a readable one.
    public var time: Timestamp? { parsedTs ?? ts.flatMap { try? Timestamp.parse($0) } }

    /// The row's position for an explanation, if it has a readable one:
    /// latitude and longitude both read as numbers within [-90, 90] and
    /// [-180, 180] (a fix's position rules, behaviour §2), whatever else
    /// made the row invalid. A position that is itself the reason has none,
    /// so an explanation is never drawn off the globe.
    public var readablePosition: LonLat? {
        guard let lat, let lon, (-90...90).contains(lat), (-180...180).contains(lon) else { return nil }
        return LonLat(lon: lon, lat: lat)
    }
}
