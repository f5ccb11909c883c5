import GeofenceCore

/// Where a batch's fixes come from: a table (default the gf_fixes inbox), or
/// a CSV or NDJSON file (`FixLines`, in the core, parsed here on a thread
/// of its own), each with the columns or keys subject_id, ts, lat, lon,
/// accuracy_m or the user's names for them (`FixFeed`), every one read into the same `FixRow`. A row that cannot be
/// read becomes an invalid fix with the reason (counted, never fatal); a
/// file whose header lacks a column, or a table that lacks one, is an input
/// error before anything is judged.
public enum FixSources {
    public static let columns = FixLines.columns

    public static func table(_ db: Connection, name: String, feed: FixFeed = .standard) throws -> [FixRow] {
        // A table name cannot be bound: it must name an existing table or view, and is quoted.
        guard try db.scalar("SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?", [.text(name)]).int64 == 1 else {
            throw InputError("no table or view named \(Echo.quoted(name))", field: "--table")
        }
        func quoted(_ name: String) -> String { "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\"" }
        // A feed without accuracies (a default accuracy given) may lack the column.
        let hasAccuracy = try !db.query("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", [.text(name), .text(feed.column(.accuracy))]).isEmpty
        let accuracy = hasAccuracy || feed.defaultAccuracy == nil ? quoted(feed.column(.accuracy)) : "NULL"
        let selected = FixField.allCases.dropLast().map { quoted(feed.column($0)) } + [accuracy]
        let s: Statement
        do { s = try db.prepare("SELECT \(selected.joined(separator: ", ")) FROM \(quoted(name)) ORDER BY rowid") } catch let e as SQLiteError {
            throw InputError("\(e.message) (a fixes table needs columns \(FixField.allCases.map(feed.column).joined(separator: ", ")))", field: "--table")
        }
        var rows: [FixRow] = []
        while try s.step() {
            var r = row(subject: s.value(0), ts: s.value(1), lat: s.value(2), lon: s.value(3), accuracy: s.value(4))
            if s.isMalformedText(0) { (r.problem, r.problemField) = ("subject_id is not UTF-8 text", .subject) }
            if feed.readsTimesOrAccuracy { feed.finish(&r) }
            rows.append(r)
        }
        return rows
    }

    /// A row from SQL values (a table's, or gf_check's arguments).
    static func row(subject: SQLiteValue, ts: SQLiteValue, lat: SQLiteValue, lon: SQLiteValue, accuracy: SQLiteValue) -> FixRow {
        func field(_ v: SQLiteValue) -> FixRow.Field {
            switch v {
            case .null: .null
            case .integer(let i): .integer(i)
            case .real(let d): .real(d)
            case .text(let t): .text(t)
            case .blob: .blob
            }
        }
        return FixRow(subject: field(subject), ts: field(ts), lat: field(lat), lon: field(lon), accuracy: field(accuracy))
    }

    public static func estimatedRows(_ path: String) throws -> Int { try FixLines.estimatedRows(path) }

    /// Whether a file's name says NDJSON (.ndjson, .jsonl); any other is CSV.
    public static func namesNDJSON(_ path: String) -> Bool { path.hasSuffix(".ndjson") || path.hasSuffix(".jsonl") }

    /// The forms a fixes file comes in.
    public enum FileFormat: String, CaseIterable, Sendable {
        case csv, ndjson
        /// The binary columns the Python wrappers write (`FixColumns`).
        case columns

        /// What a file's name says: .ndjson and .jsonl NDJSON, .fixcols columns, any other CSV.
        public init(named path: String) {
            self = namesNDJSON(path) ? .ndjson : path.hasSuffix(".fixcols") ? .columns : .csv
        }
    }

    /// Streams a fixes file in `format` (default: as its name says), parsed
    /// on a thread of its own (`ReadAhead`). The file must name the
    /// `required` columns (all five for judgement; `locate` needs only lat
    /// and lon). `name` is the one errors give (standard input is read as
    /// /dev/stdin). `feed`: the user's names of the columns, and what to make
    /// of times and missing accuracies.
    public static func file(_ path: String, name: String? = nil, required: [String] = columns, format: FileFormat? = nil,
                            feed: FixFeed = .standard) throws -> AnySequence<FixRow> {
        try file(path, name: name, required: required, format: format, feed: feed, each: { $0 })
    }

    /// The same, each row made into what the caller keeps of it (`each`) on
    /// the reading thread: a caller that needs little of a row (`locate`
    /// its position) neither copies nor frees whole rows on its own thread.
    public static func file<Kept>(_ path: String, name: String? = nil, required: [String] = columns, format: FileFormat? = nil,
                                  feed: FixFeed = .standard, each: @escaping (FixRow) -> Kept) throws -> AnySequence<Kept> {
        switch format ?? FileFormat(named: path) {
        case .columns:
            var columns = try FixColumns(path: path, name: name, required: required, feed: feed)
            return AnySequence(AnyIterator { columns.next().map(each) })
        case .ndjson:
            var lines = FixLines.NDJSON(path: name ?? path, chunks: try FileChunks(path: path), feed: feed)
            return AnySequence(ReadAhead { lines.next().map(each) })
        case .csv:
            var csv = try FixLines.CSV(path: name ?? path, chunks: try FileChunks(path: path), required: required, feed: feed)
            return AnySequence(ReadAhead { csv.next().map(each) })
        }
    }
}
