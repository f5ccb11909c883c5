import GeofenceCore

/// Where a batch's fixes come from: a table (default the gf_fixes inbox), a
/// CSV file with a header row, or NDJSON, each with the columns or keys
/// subject_id, ts, lat, lon, accuracy_m. A row that cannot be read becomes an
/// invalid fix with the reason (counted, never fatal); a file whose header
/// lacks a column is an input error before anything is judged.
public enum FixSources {
    public static let columns = ["subject_id", "ts", "lat", "lon", "accuracy_m"]

    public static func table(_ db: Connection, name: String) throws -> [Judgement.Row] {
        // A table name cannot be bound: it must name an existing table or view, and is quoted.
        guard try db.scalar("SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?", [.text(name)]).int64 == 1 else {
            throw InputError("no table or view named \(Echo.quoted(name))", field: "--table")
        }
        let quoted = "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
        let s: Statement
        do { s = try db.prepare("SELECT subject_id, ts, lat, lon, accuracy_m FROM \(quoted) ORDER BY rowid") } catch let e as SQLiteError {
            throw InputError("\(e.message) (a fixes table needs columns \(columns.joined(separator: ", ")))", field: "--table")
        }
        var rows: [Judgement.Row] = []
        while try s.step() {
            rows.append(row(subject: s.value(0), ts: s.value(1), lat: s.value(2), lon: s.value(3), accuracy: s.value(4)))
        }
        return rows
    }

    static func row(subject: SQLiteValue, ts: SQLiteValue, lat: SQLiteValue, lon: SQLiteValue, accuracy: SQLiteValue) -> Judgement.Row {
        var r = Judgement.Row(subjectId: subject.string, ts: ts.string, lat: nil, lon: nil, accuracy: nil)
        // The last bad column names the problem.
        func number(_ name: String, _ v: SQLiteValue) -> Double? {
            switch v {
            case .text(let t):
                if let d = DecimalText.parse(t) ?? NumberText.double(t.trimmingCharacters()) { return d }
                r.problem = "\(name) \(Echo.quoted(String(t.prefix(40)))) is not a number"
                return nil
            case .blob:
                r.problem = "\(name) is a BLOB, not a number"
                return nil
            default:
                return v.double
            }
        }
        r.lat = number("lat", lat)
        r.lon = number("lon", lon)
        r.accuracy = number("accuracy_m", accuracy)
        return r
    }

    /// The row for a CSV line that is empty or has the wrong number of
    /// fields; nil for a line of the header's shape. Both ways of reading a
    /// line (`PlainFixLine`, `CSVReader.readRow`) ask it.
    static func misshapen(fields: Int, empty: Bool, header: Int, line: Int) -> Judgement.Row? {
        if empty { return Judgement.Row(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil, problem: "empty line") }
        guard fields != header else { return nil }
        return Judgement.Row(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil,
                             problem: "line \(line): \(fields) fields, the header has \(header)")
    }

    /// About how many fixes a file holds, erring low: a fix takes at least
    /// ~40 bytes in CSV and more in NDJSON; 100 allows for long ids.
    public static func estimatedRows(_ path: String) throws -> Int { try FileChunks(path: path).size / 100 }

    /// Streams a CSV or NDJSON file (by extension: .ndjson/.jsonl, else CSV),
    /// parsed on a thread of its own (`ReadAhead`). A file that cannot be
    /// read to its end ends with a row carrying `readError` (file and line).
    public static func file(_ path: String) throws -> AnySequence<Judgement.Row> {
        let chunks = try FileChunks(path: path)
        if path.hasSuffix(".ndjson") || path.hasSuffix(".jsonl") {
            var lines = NDJSONFixes(path: path, chunks: chunks)
            return AnySequence(ReadAhead { lines.next() })
        }
        var csv = CSVReader(chunks: chunks.next)
        let header: [String]
        do {
            guard let h = try csv.readRow() else { throw InputError("empty file: expected a header row with \(columns.joined(separator: ", "))", file: path) }
            header = h.map { $0.trimmingCharacters() }
        } catch let e as InputError { throw e.located(file: path) }
        let index = try columns.map { c -> Int in
            guard let i = header.firstIndex(of: c) else {
                throw InputError("the header has no column \(Echo.quoted(c)) (needs \(columns.joined(separator: ", ")))", file: path, item: "line 1")
            }
            return i
        }
        var ended = false
        return AnySequence(ReadAhead {
            guard !ended else { return nil }
            let number = csv.line
            if let r = csv.withPlainLine({ PlainFixLine.row($0, index, fields: header.count, line: number) }) { return r }
            guard let fields = csv.next() else {
                ended = true
                guard let e = csv.error else { return nil }
                var r = Judgement.Row(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil)
                r.readError = e.located(file: path)
                return r
            }
            if let bad = misshapen(fields: fields.count, empty: fields.count == 1 && fields[0].isEmpty, header: header.count, line: csv.line - 1) {
                return bad
            }
            func value(_ k: Int) -> SQLiteValue {
                let v = fields[index[k]].trimmingCharacters()
                return v.isEmpty ? .null : .text(v)
            }
            return row(subject: value(0), ts: value(1), lat: value(2), lon: value(3), accuracy: value(4))
        })
    }
}

/// One JSON object per line; a line that is not one is an invalid fix.
struct NDJSONFixes: Sequence, IteratorProtocol {
    let path: String
    var lines: LineSplitter

    init(path: String, chunks: FileChunks) { self.path = path; lines = LineSplitter(chunks: chunks.next) }

    mutating func next() -> Judgement.Row? {
        guard let (number, text) = lines.next() else {
            guard let e = lines.readError else { return nil }
            lines.readError = nil
            var r = Judgement.Row(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil)
            r.readError = InputError("read error: \(e)", file: path, item: "after line \(lines.number)")
            return r
        }
        if text.allSatisfy({ $0 == " " || $0 == "\r" || $0 == "\t" }) {
            return Judgement.Row(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil, problem: "line \(number): empty line")
        }
        let v: JSONValue
        do { v = try JSONReader.parse(text) } catch {
            // Why, too: a duplicate name or a NUL is JSON some parsers take.
            return Judgement.Row(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil, problem: "line \(number): not a JSON object (\(error))")
        }
        guard case .object = v else {
            return Judgement.Row(subjectId: nil, ts: nil, lat: nil, lon: nil, accuracy: nil, problem: "line \(number): not a JSON object")
        }
        func value(_ k: String) -> SQLiteValue {
            switch v[k] {
            case .string(let s)?: return .text(s)
            case .number(let n)?:
                if k == "ts" || k == "subject_id" { return .text(n) }
                return Double(n).map(SQLiteValue.real) ?? .text(n)
            case nil, .null?: return .null
            case let other?: return .text(other.serialized)
            }
        }
        return FixSources.row(subject: value("subject_id"), ts: value("ts"), lat: value("lat"), lon: value("lon"), accuracy: value("accuracy_m"))
    }
}

/// Splits a byte stream into numbered UTF-8 lines.
struct LineSplitter {
    var next_: () throws -> [UInt8]?
    var pending: [UInt8] = []
    var start = 0
    var number = 0
    var done = false
    var readError: String?
    init(chunks: @escaping () throws -> [UInt8]?) { next_ = chunks }

    mutating func next() -> (Int, String)? {
        while true {
            if let nl = pending[start...].firstIndex(of: 0x0A) {
                let line = String(decoding: pending[start..<nl], as: UTF8.self)
                start = nl + 1
                number += 1
                return (number, line)
            }
            if done {
                guard start < pending.count else { return nil }
                number += 1
                defer { start = pending.count }
                return (number, String(decoding: pending[start...], as: UTF8.self))
            }
            // Keep only the unfinished line before appending the next chunk.
            pending.removeSubrange(..<start)
            start = 0
            do {
                if let c = try next_() { pending += c } else { done = true }
            } catch {
                // A read error ends the stream; NDJSONFixes reports it as one more invalid row.
                done = true
                readError = "\(error)"
            }
        }
    }
}

/// A plain CSV line of fixes (`CSVReader.withPlainLine`: ASCII, no quotes)
/// made into a row from its bytes: the usual row of a fixes file costs one
/// String (its subject) instead of a String per field, a row array and a
/// parse of each number and time from a String (together most of reading
/// a medium batch). A line this cannot settle, or an odd one, gets the same
/// treatment as a line `CSVReader.readRow` read, so its row is the same.
enum PlainFixLine {
    static func row(_ line: UnsafeBufferPointer<UInt8>, _ index: [Int], fields: Int, line number: Int) -> Judgement.Row {
        withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: fields) { bounds in
            var n = 0, start = 0
            for i in 0...line.count where i == line.count || line[i] == 0x2C {
                if n < fields { bounds[n] = start..<i }
                n += 1
                start = i + 1
            }
            if let bad = FixSources.misshapen(fields: n, empty: n == 1 && line.isEmpty, header: fields, line: number) { return bad }
            /// Column k (in `FixSources.columns` order) without spaces at its
            /// ends (only spaces, as `trimmingCharacters` trims a field).
            func field(_ k: Int) -> UnsafeBufferPointer<UInt8> {
                var r = bounds[index[k]]
                while !r.isEmpty && line[r.lowerBound] == 0x20 { r = (r.lowerBound + 1)..<r.upperBound }
                while !r.isEmpty && line[r.upperBound - 1] == 0x20 { r = r.lowerBound..<(r.upperBound - 1) }
                return UnsafeBufferPointer(rebasing: line[r])
            }
            let subject = field(0), time = field(1)
            if !subject.isEmpty, let ts = Timestamp.parseCommon(time),
               let lat = DecimalText.parse(field(2)), let lon = DecimalText.parse(field(3)), let accuracy = DecimalText.parse(field(4)) {
                var r = Judgement.Row(subjectId: String(decoding: subject, as: UTF8.self), ts: nil, lat: lat, lon: lon, accuracy: accuracy)
                r.parsedTs = ts
                return r
            }
            func value(_ k: Int) -> SQLiteValue {
                let v = field(k)
                return v.isEmpty ? .null : .text(String(decoding: v, as: UTF8.self))
            }
            return FixSources.row(subject: value(0), ts: value(1), lat: value(2), lon: value(3), accuracy: value(4))
        }
    }
}
