/// Fixes as columns: the binary file the Python wrappers write
/// (`geofence.judge(db, frame)`), read into the same `FixRow`s as a CSV file.
/// A float column travels as its doubles, so a coordinate arrives with the
/// bits it had in the caller's frame, and no number is formatted as text and
/// parsed back (in Python, formatting floats as text costs more than the
/// run itself; benchmarks/results.md).
///
///     geofence judge fences.db --fixes frame.fixcols          # by the name
///     geofence judge fences.db --fixes F --fixes-format columns
///
/// The layout (all integers little-endian; docs/inputs.md):
///
///     "GFFIXES1"                     8 bytes
///     rows                           UInt64
///     columns                        UInt32
///     per column: name length UInt32, name (UTF-8), kind UInt8
///                 (1 float64, 2 text), data length UInt64
///     per column, in that order, its data:
///       float64: rows doubles (NaN: missing)
///       text:    rows + 1 offsets (UInt64, from 0, never decreasing, the
///                last the length of the bytes), then the UTF-8 bytes;
///                value k is bytes[offset k ..< offset k+1], empty: missing
///
/// Columns are found by name, as a CSV header's are (`FixFeed` maps them);
/// others are ignored. How it works: the file is read whole, every length
/// and offset checked against it before the first row is made, so a
/// truncated or hostile file is an input error that names the file, never
/// a read past its end. A row is then made as a table's are (a double a
/// `.real`, text a `.text`, read as a CSV field is), so every rule after
/// reading is the one every door shares.
public struct FixColumns: IteratorProtocol {
    public static let magic = Array("GFFIXES1".utf8)

    /// A column's data, checked.
    enum Column {
        case float64(offset: Int)
        case text(offsets: Int, bytes: Int)
    }

    let path: String
    let bytes: [UInt8]
    public let rows: Int
    /// Each `FixField`'s column; nil for an optional column the file does not have.
    let fields: [Column?]
    let feed: FixFeed
    /// The row `next()` makes next, from 0.
    var position = 0

    /// Reads and checks `path` (`name` in errors). `required` names engine
    /// fields, as for CSV; `feed` says the user's name of each.
    public init(path: String, name: String? = nil, required: [String] = FixLines.columns, feed: FixFeed = .standard) throws {
        let shown = name ?? path
        let chunks = try FileChunks(path: path)
        var all: [UInt8] = []
        all.reserveCapacity(chunks.size)
        do { while let c = try chunks.next() { all += c } } catch let e as InputError { throw e.located(file: shown) }
        var layout = Layout(bytes: all, file: shown)
        let (rows, named) = try layout.read()
        self.path = shown; self.bytes = all; self.rows = rows; self.feed = feed
        fields = try FixField.allCases.map { f in
            if let c = named[Array(feed.column(f).utf8)] {
                // A subject is text: a double has no one spelling of it (7, 7.0, 7e0).
                if f == .subject, case .float64 = c {
                    throw InputError("column \(Echo.quoted(feed.column(f))) holds doubles; a subject id is text (kind 2)", file: shown)
                }
                return c
            }
            guard required.contains(f.column) else { return nil }
            let header = named.keys.map { String(decoding: $0, as: UTF8.self) }.sorted()
            throw InputError(FixLines.missingColumn(f, required: required, header: header, feed: feed, holder: "the file"), file: shown)
        }
    }

    public mutating func next() -> FixRow? {
        guard position < rows else { return nil }
        defer { position += 1 }
        var malformed: FixField?
        func value(_ f: FixField) -> FixRow.Field {
            let v = field(f)
            if v == nil { malformed = f }
            return v ?? .null
        }
        var row = FixRow(subject: value(.subject), ts: value(.ts), lat: value(.lat), lon: value(.lon), accuracy: value(.accuracy))
        if let bad = malformed {
            // As a CSV file's bytes that are not UTF-8: the batch cannot trust what follows.
            row.readError = InputError("row \(position + 1): column \(Echo.quoted(feed.column(bad))) is not UTF-8 text", file: path)
        }
        if feed.readsTimesOrAccuracy { feed.finish(&row) }
        return row
    }

    /// Row `position`'s value of `f`: a double, text, or null (NaN, empty
    /// text, no such column); nil for text that is not UTF-8.
    private func field(_ f: FixField) -> FixRow.Field? {
        switch fields[f.rawValue] {
        case nil: return .null
        case .float64(let at):
            let d = Double(bitPattern: Layout.uint64(bytes, at + 8 * position))
            return d.isNaN ? .null : .real(d)
        case .text(let offsets, let start):
            let from = Int(Layout.uint64(bytes, offsets + 8 * position)), to = Int(Layout.uint64(bytes, offsets + 8 * position + 8))
            guard to > from else { return .null }
            guard let text = String(validating: bytes[(start + from)..<(start + to)], as: UTF8.self) else { return nil }
            // As a CSV field is read: a subject as written, a time or number without spaces at its ends.
            let value = f == .subject ? text : text.trimmingEdgeSpaces()
            return value.isEmpty ? .null : .text(value)
        }
    }

    /// The header and the extent of each column, checked against the file.
    struct Layout {
        let bytes: [UInt8]
        let file: String
        var at = 0

        init(bytes: [UInt8], file: String) { self.bytes = bytes; self.file = file }

        func fail(_ message: String) -> InputError {
            InputError("not a fix columns file: \(message)", file: file)
        }

        /// The little-endian unsigned integer of `size` bytes at `at` (checked by the caller).
        static func uint64(_ b: [UInt8], _ at: Int, size: Int = 8) -> UInt64 {
            (0..<size).reduce(UInt64(0)) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) }
        }

        mutating func take(_ n: Int, _ what: String) throws -> Int {
            guard n >= 0, n <= bytes.count - at else { throw fail("it ends inside \(what) (byte \(at) of \(bytes.count))") }
            defer { at += n }
            return at
        }

        mutating func integer(_ size: Int, _ what: String) throws -> UInt64 {
            Self.uint64(bytes, try take(size, what), size: size)
        }

        /// The row count and each column by name.
        /// Names are told apart by their bytes, as a CSV header's are, not by
        /// Unicode equivalence (`café` and `cafe` + U+0301 are two columns).
        mutating func read() throws -> (rows: Int, columns: [[UInt8]: Column]) {
            let start = try take(8, "its first 8 bytes")
            guard Array(bytes[start..<start + 8]) == FixColumns.magic else { throw fail("it does not begin with GFFIXES1") }
            let rows64 = try integer(8, "the row count"), count = try integer(4, "the column count")
            // A row takes 8 bytes of each column (an offset or a double), a column's head 13: no count larger than the file.
            guard rows64 <= UInt64(bytes.count) / 8, count <= UInt64(bytes.count) / 13 else {
                throw fail("\(rows64) rows in \(count) columns cannot fit in \(bytes.count) bytes")
            }
            let rows = Int(rows64)
            var heads: [(name: String, kind: UInt64, length: Int)] = []
            for k in 0..<Int(count) {
                let length = try integer(4, "column \(k + 1)'s name")
                let nameAt = try take(Int(length), "column \(k + 1)'s name")
                guard let name = String(validating: bytes[nameAt..<nameAt + Int(length)], as: UTF8.self) else {
                    throw fail("column \(k + 1)'s name is not UTF-8")
                }
                let kind = try integer(1, "column \(Echo.quoted(name))'s kind")
                let data = try integer(8, "column \(Echo.quoted(name))'s length")
                guard data <= UInt64(bytes.count) else { throw fail("column \(Echo.quoted(name)) is longer than the file") }
                heads.append((name, kind, Int(data)))
            }
            var columns: [[UInt8]: Column] = [:]
            for head in heads {
                let name = Echo.quoted(head.name), key = Array(head.name.utf8)
                guard columns[key] == nil else { throw InputError("column \(name) appears twice", file: file) }
                let data = try take(head.length, "column \(name)'s data")
                switch head.kind {
                case 1:
                    guard head.length == 8 * rows else { throw fail("column \(name) holds \(head.length) bytes, not \(rows) doubles") }
                    columns[key] = .float64(offset: data)
                case 2:
                    let table = 8 * (rows + 1)
                    guard head.length >= table else { throw fail("column \(name) holds \(head.length) bytes, too few for \(rows + 1) offsets") }
                    var previous: UInt64 = 0
                    for k in 0...rows {
                        let o = Self.uint64(bytes, data + 8 * k)
                        guard (k == 0 ? o == 0 : o >= previous), o <= UInt64(head.length - table) else {
                            throw fail("column \(name)'s offset \(k + 1) (\(o)) is out of order or past its text")
                        }
                        previous = o
                    }
                    guard Int(previous) == head.length - table else { throw fail("column \(name)'s last offset is not the end of its text") }
                    columns[key] = .text(offsets: data, bytes: data + table)
                default:
                    throw fail("column \(name) has kind \(head.kind) (1: float64, 2: text)")
                }
            }
            guard at == bytes.count else { throw fail("\(bytes.count - at) bytes follow the last column") }
            return (rows, columns)
        }
    }
}
