/// Fixes files read line by line into `FixRow`s: CSV with a header row, or
/// NDJSON, each with the columns or keys subject_id, ts, lat, lon,
/// accuracy_m, or the user's own names for them (`FixFeed`). A line that cannot be read becomes a row with its `problem`
/// (an invalid fix, counted, never fatal); a file that cannot be read to its
/// end ends with a row carrying `readError` (file and line).
///
///     var csv = try FixLines.CSV(path: "fixes.csv")     // checks the header
///     while let row = csv.next() { … }
///
/// Pure: the SQL layer runs these on a thread of their own (`ReadAhead`)
/// and reads a table's rows into the same `FixRow`.
public enum FixLines {
    public static let columns = FixField.allCases.map(\.column)

    /// About how many fixes a file holds, erring low: a fix takes at least
    /// ~40 bytes in CSV and more in NDJSON; 100 allows for long ids.
    public static func estimatedRows(_ path: String) throws -> Int { try FileChunks(path: path).size / 100 }

    /// The row for a CSV line that is empty or has the wrong number of
    /// fields; nil for a line of the header's shape. Both ways of reading a
    /// line (`plainRow`, `CSVReader.readRow`) ask it.
    static func misshapen(fields: Int, empty: Bool, header: Int, line: Int) -> FixRow? {
        if empty { return FixRow(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil, problem: "empty line") }
        guard fields != header else { return nil }
        return FixRow(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil, problem: "line \(line): \(fields) fields, the header has \(header)")
    }

    /// A CSV file of fixes with a header row naming (at least) `columns`.
    public struct CSV: IteratorProtocol {
        let path: String
        var reader: CSVReader
        /// Each of `columns`' place in a line; nil for an optional column the file does not have.
        let index: [Int?], fields: Int
        let feed: FixFeed
        var ended = false

        /// Reads the header; an input error if the file is empty or lacks a
        /// `required` column (a missing optional column reads as empty).
        /// `required` names engine fields; `feed` says the user's column of
        /// each, and what to make of times and missing accuracies.
        public init(path: String, chunks: FileChunks, required: [String] = FixLines.columns, feed: FixFeed = .standard) throws {
            try self.init(path: path, source: chunks.next, required: required, feed: feed)
        }

        /// The same, from any source of bytes (`source` returns the next
        /// chunk, nil at the end): a pipe, memory, a fuzzer's input.
        public init(path: String, source: @escaping () throws -> [UInt8]?, required: [String] = FixLines.columns,
                    feed: FixFeed = .standard) throws {
            self.path = path
            self.feed = feed
            reader = CSVReader(chunks: source)
            let header: [String]
            do {
                guard let h = try reader.readRow() else {
                    throw InputError("empty file: expected a header row with \(columns.joined(separator: ", "))", file: path)
                }
                header = h.map { $0.trimmingEdgeSpaces() }
            } catch let e as InputError { throw e.located(file: path) }
            index = try FixField.allCases.map { f -> Int? in
                let c = feed.column(f)
                // Two columns of one name: which holds the fix is anyone's guess.
                if header.filter({ $0 == c }).count > 1 {
                    throw InputError("the header names column \(Echo.quoted(c)) twice", file: path, item: "line 1")
                }
                guard let i = header.firstIndex(of: c) else {
                    guard required.contains(f.column) else { return nil }
                    throw InputError(FixLines.missingColumn(f, required: required, header: header, feed: feed), file: path, item: "line 1")
                }
                return i
            }
            fields = header.count
        }

        public mutating func next() -> FixRow? {
            guard !ended else { return nil }
            let number = reader.line
            let (index, fields) = (self.index, self.fields)
            let feed = self.feed
            if let r = reader.withPlainLine({ FixLines.plainRow($0, index, fields: fields, line: number, feed: feed) }) { return r }
            guard let values = reader.next() else {
                ended = true
                guard let e = reader.error else { return nil }
                var r = FixRow(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil)
                r.readError = e.located(file: path)
                return r
            }
            if let bad = misshapen(fields: values.count, empty: values.count == 1 && values[0].isEmpty, header: fields, line: reader.line - 1) {
                return bad
            }
            /// Spaces at the ends of a time or number are dropped (a
            /// hand-written `a, 2026-…, 35.6`): it means the same with or
            /// without them. A subject is as written, quoted or not, as RFC
            /// 4180 and the tools that write CSV mean it: ` a ` is the subject
            /// `gf_check(' a ', …)` names, not `a` (two subjects would merge).
            func value(_ k: Int) -> FixRow.Field {
                guard let i = index[k] else { return .null }
                let v = k == 0 ? values[i] : values[i].trimmingEdgeSpaces()
                return v.isEmpty ? .null : .text(v)
            }
            var row = FixRow(subject: value(0), ts: value(1), lat: value(2), lon: value(3), accuracy: value(4))
            if feed.readsTimesOrAccuracy { feed.finish(&row) }
            return row
        }
    }

    /// Why a header lacks `field`'s column, in the user's terms: the column
    /// they mapped it to and the columns the header has; for accuracy, the
    /// option that stands in for a feed without one; for a header of one
    /// field holding another separator (a spreadsheet's ';' export), that.
    /// `holder`: what lacks it, as the user knows it.
    static func missingColumn(_ field: FixField, required: [String], header: [String], feed: FixFeed, holder: String = "the header") -> String {
        let c = feed.column(field)
        var message = "\(holder) has no column \(Echo.quoted(c))"
        message += c == field.column ? " (needs \(required.compactMap(FixField.init(column:)).map(feed.column).joined(separator: ", ")))"
                                     : " (--columns \(field.column)=\(c))"
        if field == .accuracy { message += "; a feed without accuracies takes one for every row from --accuracy-m METRES" }
        if feed.renames && c != field.column {
            message += "; its columns: " + header.map(Echo.quoted).joined(separator: ", ")
        } else if header.count > 1 {
            // Columns of other names: say them, and how to name the field's
            // (also when other fields were renamed and this one was not).
            message += "; its columns: " + header.map(Echo.quoted).joined(separator: ", ") + " (name yours with --columns \(field.column)=COLUMN)"
        }
        return message + CSVReader.separatorHint(header: header)
    }

    /// A plain CSV line of fixes (`CSVReader.withPlainLine`: ASCII, no quotes)
    /// made into a row from its bytes: the usual row of a fixes file costs one
    /// String (its subject) instead of a String per field, a row array and a
    /// parse of each number and time from a String. A line this cannot
    /// settle, or an odd one, gets the same treatment as a line
    /// `CSVReader.readRow` read, so its row is the same.
    static func plainRow(_ line: UnsafeBufferPointer<UInt8>, _ index: [Int?], fields: Int, line number: Int, feed: FixFeed) -> FixRow {
        withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: fields) { bounds in
            var n = 0, start = 0
            for i in 0...line.count where i == line.count || line[i] == 0x2C {
                if n < fields { bounds[n] = start..<i }
                n += 1
                start = i + 1
            }
            if let bad = misshapen(fields: n, empty: n == 1 && line.isEmpty, header: fields, line: number) { return bad }
            /// Column k (in `columns` order): the subject as written, any other
            /// without spaces at its ends (only spaces, as `next()` trims).
            func field(_ k: Int) -> UnsafeBufferPointer<UInt8> {
                guard let i = index[k] else { return UnsafeBufferPointer(rebasing: line[0..<0]) }
                var r = bounds[i]
                if k == 0 { return UnsafeBufferPointer(rebasing: line[r]) }
                while !r.isEmpty && line[r.lowerBound] == 0x20 { r = (r.lowerBound + 1)..<r.upperBound }
                while !r.isEmpty && line[r.upperBound - 1] == 0x20 { r = r.lowerBound..<(r.upperBound - 1) }
                return UnsafeBufferPointer(rebasing: line[r])
            }
            let subject = field(0), time = field(1), accuracyField = field(4)
            // Numbers are seconds here: a feed of milliseconds takes the general path.
            if feed.timeUnit == .seconds, !subject.isEmpty, let ts = Timestamp.parseCommon(time),
               let lat = DecimalText.parse(field(2)), let lon = DecimalText.parse(field(3)),
               let accuracy = DecimalText.parse(accuracyField) ?? (accuracyField.isEmpty ? feed.defaultAccuracy : nil) {
                var r = FixRow(subjectId: String(decoding: subject, as: UTF8.self), ts: nil, lat: lat, lon: lon, accuracy: accuracy)
                r.parsedTs = ts
                return r
            }
            func value(_ k: Int) -> FixRow.Field {
                let v = field(k)
                return v.isEmpty ? .null : .text(String(decoding: v, as: UTF8.self))
            }
            var row = FixRow(subject: value(0), ts: value(1), lat: value(2), lon: value(3), accuracy: value(4))
            if feed.readsTimesOrAccuracy { feed.finish(&row) }
            return row
        }
    }

    /// One JSON object per line; a line that is not one is an invalid fix.
    /// `path` is the name errors give.
    public struct NDJSON: IteratorProtocol {
        let path: String
        var lines: LineSplitter
        let feed: FixFeed

        static func kind(_ v: JSONValue) -> String {
            switch v {
            case .bool: "boolean"
            case .array: "array"
            case .object: "object"
            default: "value"
            }
        }

        /// `feed` names the keys of each field and says what to make of
        /// times and missing accuracies (`FixFeed`).
        public init(path: String, chunks: FileChunks, feed: FixFeed = .standard) { self.init(path: path, source: chunks.next, feed: feed) }

        /// The same, from any source of bytes (as `CSV.init(path:source:required:)`).
        public init(path: String, source: @escaping () throws -> [UInt8]?, feed: FixFeed = .standard) {
            self.path = path
            self.feed = feed
            lines = LineSplitter(chunks: source)
        }

        public mutating func next() -> FixRow? {
            guard let (number, text) = lines.next() else {
                if lines.notUTF8 {
                    lines.notUTF8 = false
                    var r = FixRow(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil)
                    r.readError = InputError("bytes that are not UTF-8 (an NDJSON file is UTF-8 text)", file: path, item: "line \(lines.number)")
                    return r
                }
                guard let e = lines.readError else { return nil }
                lines.readError = nil
                var r = FixRow(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil)
                r.readError = InputError("read error: \(e)", file: path, item: "after line \(lines.number)")
                return r
            }
            if text.allSatisfy({ $0 == " " || $0 == "\r" || $0 == "\t" }) {
                return FixRow(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil, problem: "line \(number): empty line")
            }
            let v: JSONValue
            do { v = try JSONReader.parse(text) } catch {
                // Why, too: a duplicate name or a NUL is JSON some parsers take.
                // A record is one line: the parser's own line number (always 1) would only confuse.
                let why = (error as? JSONSyntaxError).map { "column \($0.column): \($0.message)" } ?? "\(error)"
                return FixRow(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil, problem: "line \(number): not a JSON object (\(why))")
            }
            guard case .object(let members) = v else {
                return FixRow(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil, problem: "line \(number): not a JSON object")
            }
            // A number's own text for an id or a time (`Timestamp.unixSecondsText(jsonNumber:)`).
            func value(_ f: FixField) -> FixRow.Field {
                switch v[feed.column(f)] {
                case .string(let s)?: return .text(s)
                case .number(let n)?:
                    if f == .ts { return .text(Timestamp.unixSecondsText(jsonNumber: n)) }
                    if f == .subject { return .text(n) }
                    return Double(n).map(FixRow.Field.real) ?? .text(n)
                case nil, .null?: return .null
                case let other?: return .text(other.serialized)
                }
            }
            var row = FixRow(subject: value(.subject), ts: value(.ts), lat: value(.lat), lon: value(.lon), accuracy: value(.accuracy))
            if feed.readsTimesOrAccuracy { feed.finish(&row) }
            // true, [..] or {..} names no subject and no time (GeoJSON refuses them as area ids too).
            for f in [FixField.subject, .ts] {
                let k = feed.column(f)
                switch v[k] {
                case .bool?, .array?, .object?: row.problem = "line \(number): \(k) is a JSON \(v[k].map(Self.kind) ?? ""), not a string or number"
                default: break
                }
            }
            // A key the user mapped that the object lacks: say which keys it has (a misspelt mapping fails every line).
            for f in FixField.allCases where feed.column(f) != f.column && v[feed.column(f)] == nil
                && !(f == .accuracy && feed.defaultAccuracy != nil) {
                row.problem = "line \(number): no key \(Echo.quoted(feed.column(f))) (--columns \(f.column)=\(feed.column(f))); its keys: "
                    + members.map { Echo.quoted($0.0) }.joined(separator: ", ")
                break
            }
            return row
        }
    }
}
