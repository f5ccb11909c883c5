/// How a feed writes its fixes, when not as the engine names them: which of
/// the user's columns (CSV) or keys (NDJSON, a table's columns) holds each
/// field, the unit of numeric times, the accuracy of rows without one, and
/// the zone of times written without an offset. Every door that reads fixes
/// (`FixLines.CSV`, `FixLines.NDJSON`, `FixSources.table`, `geofence check`)
/// asks this one value, so a mapping means the same everywhere and errors
/// name the user's column, not the engine's.
///
///     var feed = try FixFeed(columns: "subject_id=device_id,lat=latitude,lon=longitude,ts=timestamp")
///     feed.timeUnit = .milliseconds
///     feed.defaultAccuracy = 10
///     feed.column(.lat)                       // "latitude"
///
/// The plain feed (`FixFeed.standard`) changes nothing: its readers take the
/// rows as the engine's own column names and Unix seconds give them.
public struct FixFeed: Sendable {
    /// The unit of a time written as a number. Never guessed from the
    /// digits: 1700000000 is a time in 2023 in seconds and one in January
    /// 1970 in milliseconds, and both are valid.
    public enum TimeUnit: String, Sendable, CaseIterable {
        case seconds = "s", milliseconds = "ms"
    }

    /// The user's name of each field, in `FixField` order.
    public private(set) var columns: [String] = FixField.allCases.map(\.column)
    public var timeUnit = TimeUnit.seconds
    /// The accuracy (metres, CEP68) of a row that has none: a feed without
    /// an accuracy column, or an empty field. nil: such a row is invalid
    /// (judgement) or exact (locate), as without a feed.
    public var defaultAccuracy: Double?
    /// The zone a time without a UTC offset is read in; nil: such a time is
    /// refused (behaviour §6).
    public var localZone: TimeZone?

    public static let standard = FixFeed()
    public init() {}

    /// A feed whose columns are named by `mapping`, `field=column,…`
    /// (`subject_id=device_id,lat=latitude`): engine field = the user's
    /// column; a field not listed keeps its own name. An input error (of
    /// `option`) for an unknown field, a field named twice, an empty column,
    /// or two fields read from one column.
    public init(columns mapping: String, option: String = "--columns") throws {
        var mapped: Set<FixField> = []
        for pair in Self.pairs(mapping) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let field = String(parts[0]).trimmingEdgeSpaces()
            guard parts.count == 2 else {
                throw InputError("expected FIELD=COLUMN pairs separated by commas (subject_id=device_id,lat=latitude), got \(Echo.quoted(String(pair)))",
                                 field: option)
            }
            let column = String(parts[1]).trimmingEdgeSpaces()
            guard let f = FixField(column: field) else {
                throw InputError("\(Echo.quoted(field)) is no field of a fix; the fields are \(FixField.allCases.map(\.column).joined(separator: ", "))",
                                 field: option)
            }
            guard !column.isEmpty else { throw InputError("\(field)= names no column", field: option) }
            guard !mapped.contains(f) else { throw InputError("\(field) is mapped twice", field: option) }
            mapped.insert(f)
            columns[f.rawValue] = column
        }
        for f in FixField.allCases {
            if let other = FixField.allCases.first(where: { $0.rawValue < f.rawValue && columns[$0.rawValue] == columns[f.rawValue] }) {
                throw InputError("\(other.column) and \(f.column) would both be read from column \(Echo.quoted(columns[f.rawValue]))", field: option)
            }
        }
    }

    /// `FIELD=COLUMN` pairs split at the commas that start another pair: a
    /// comma followed by something that is not `FIELD=` belongs to the
    /// column name before it (a header such as `"acc, m"`).
    static func pairs(_ mapping: String) -> [Substring] {
        var out: [Substring] = []
        for piece in mapping.split(separator: ",", omittingEmptySubsequences: false) {
            let head = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let startsPair = head.count == 2 && FixField(column: String(head[0]).trimmingEdgeSpaces()) != nil
            if !startsPair, let last = out.last, last.contains("=") {
                out[out.count - 1] = mapping[last.startIndex..<piece.endIndex]
            } else {
                out.append(piece)
            }
        }
        return out
    }

    /// The user's column (or key) for `field`.
    public func column(_ field: FixField) -> String { columns[field.rawValue] }

    /// Whether any field is read from a column of another name.
    public var renames: Bool { FixField.allCases.contains { columns[$0.rawValue] != $0.column } }

    /// Whether rows need `finish`: a time unit, a zone or a default accuracy to apply.
    public var readsTimesOrAccuracy: Bool { timeUnit != .seconds || localZone != nil || defaultAccuracy != nil }

    /// The instant `text` names in this feed: a number in `timeUnit`, ISO
    /// 8601 with an offset, or, with a `localZone`, ISO 8601 without one
    /// read as local time there (`TimeZone.instant(localSeconds:)`: a time
    /// the clocks skipped is refused, one they repeated is the earlier).
    public func time(_ text: String) throws -> Timestamp {
        try timeAndForm(text).time
    }

    /// `time(text)`, and whether it was read as local time in `localZone`.
    func timeAndForm(_ text: String) throws -> (time: Timestamp, local: Bool) {
        if timeUnit == .milliseconds, let t = try Timestamp.parseMilliseconds(text) { return (t, false) }
        do { return (try Timestamp.parse(text), false) } catch Timestamp.ParseError.noOffset(let s) {
            guard let localZone else { throw Timestamp.ParseError.noOffset(s) }
            return (try Timestamp.parseLocal(s, in: localZone), true)
        }
    }

    /// Applies the time unit, the zone and the default accuracy to a row a
    /// reader made: its time parsed here (`parsedTs`), or the reason it
    /// cannot be; a missing accuracy made `defaultAccuracy`. `readsTimes`
    /// false leaves the time alone (locate needs none).
    public func finish(_ row: inout FixRow, readsTimes: Bool = true) {
        if row.accuracy == nil, row.problemField != .accuracy, let a = defaultAccuracy { row.accuracy = a }
        guard readsTimes, timeUnit != .seconds || localZone != nil, row.parsedTs == nil, let text = row.ts, !text.isEmpty else { return }
        do {
            (row.parsedTs, row.readAsLocalTime) = try timeAndForm(text)
            row.ts = nil
        } catch {
            if row.problem == nil { row.problem = "\(error)"; row.problemField = .ts }
        }
    }

    /// Why a fix is invalid, in the user's terms: with columns renamed, the
    /// reason of a field names the user's column (`column 'latitude': …`).
    public func describe(_ invalid: InvalidFix) -> String {
        guard renames, let f = invalid.field else { return invalid.reason }
        return "column \(Echo.quoted(column(f))): \(invalid.reason)"
    }
}

/// The five fields of a fix, in the order readers and tables hold them.
public enum FixField: Int, CaseIterable, Sendable {
    case subject, ts, lat, lon, accuracy

    /// The field of this engine name (`accuracy_m` for `.accuracy`).
    public init?(column: String) {
        guard let f = Self.allCases.first(where: { $0.column == column }) else { return nil }
        self = f
    }

    /// The engine's name of the field: the column of gf_fixes and of a fixes file.
    public var column: String {
        switch self {
        case .subject: "subject_id"
        case .ts: "ts"
        case .lat: "lat"
        case .lon: "lon"
        case .accuracy: "accuracy_m"
        }
    }
}
