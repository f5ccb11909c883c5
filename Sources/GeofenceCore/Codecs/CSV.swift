/// RFC 4180 CSV: comma-separated, double-quoted fields with "" for a quote,
/// CRLF or LF line ends, and a lone CR too, as Python's csv module and pandas
/// read it: spreadsheets on the Mac still export CR-only files, which must not
/// read as one long line. A CR or LF inside a quoted field is kept. A UTF-8
/// byte-order mark at the start is skipped.
/// `CSVReader` streams rows from chunks, so a file of millions of fixes is
/// never whole in memory.
public struct CSVReader: IteratorProtocol, Sequence {
    private var next_: () throws -> [UInt8]?
    private var buffer: [UInt8] = []
    private var position = 0
    private var eof = false
    private var first = true
    public private(set) var line = 1
    /// Set when a row could not be read; iteration then stops.
    public private(set) var error: InputError?

    public init(chunks: @escaping () throws -> [UInt8]?) { self.next_ = chunks }

    private mutating func byte() throws -> UInt8? {
        if position >= buffer.count {
            if eof { return nil }
            repeat {
                guard let c = try next_() else { eof = true; return nil }
                buffer = c; position = 0
            } while buffer.isEmpty
            if first {
                first = false
                // A byte-order mark may straddle tiny chunks (a pipe can deliver a byte at a time).
                while buffer.count < 3 && !eof {
                    if let more = try next_() { buffer += more } else { eof = true }
                }
                if buffer.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3; return try byte() }
            }
        }
        defer { position += 1 }
        return buffer[position]
    }

    public mutating func next() -> [String]? {
        do { return try readRow() } catch let e as InputError { error = e; return nil } catch {
            self.error = InputError("\(error)")
            return nil
        }
    }

    /// The field's text, nil if it is not UTF-8. ASCII (nearly every field of
    /// a fixes file) needs no validation: `String(validating:)` is a generic
    /// call that looks up type metadata per field.
    @inline(__always)
    static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var high: UInt8 = 0
        for b in bytes { high |= b }
        if high < 0x80 { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Field `index` (1-based) of the row at `line` as text. A field that is
    /// not UTF-8, or holds a NUL byte, makes the file unreadable from there:
    /// NUL is no character of a CSV text file, and text is read up to a NUL
    /// by C callers, so `walk\0er` would become `walk`.
    static func field(_ bytes: UnsafeBufferPointer<UInt8>, index: Int, line: Int) throws -> String {
        guard let s = text(bytes) else { throw InputError("field \(index) is not valid UTF-8", item: "line \(line)") }
        if bytes.contains(0) { throw InputError("field \(index) holds a NUL byte (a CSV file is text)", item: "line \(line)") }
        return s
    }

    /// Hands `body` the next line's bytes (without its CRLF, LF or CR) when
    /// the line is plain: ASCII, with no quote or NUL, and whole in the chunk
    /// at hand (a CR at the chunk's end may be half a CRLF). Such a line's fields are exactly its comma-separated
    /// parts, as `readRow` would give them, and a caller can read them
    /// without a String each. Returns nil, consuming nothing, for any other
    /// line and at a chunk's end: `readRow` reads that one.
    public mutating func withPlainLine<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        guard !first, position < buffer.count else { return nil }
        let start = position
        let end: (content: Int, next: Int)? = buffer.withUnsafeBufferPointer { b in
            var i = start
            while i < b.count {
                let c = b[i]
                if c == 0x0A { return (i, i + 1) }
                if c == 0x0D { return i + 1 < b.count ? (i, b[i + 1] == 0x0A ? i + 2 : i + 1) : nil }
                if c == 0x22 || c >= 0x80 || c == 0 { return nil }
                i += 1
            }
            return nil
        }
        guard let end else { return nil }
        let result = try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[start..<end.content])) }
        position = end.next
        line += 1
        return result
    }

    /// For a header that lacks a column: when it is one field holding another
    /// separator (a spreadsheet's `;` export, a tab-separated file), what to
    /// add to the error; otherwise "".
    public static func separatorHint(header: [String]) -> String {
        guard header.count == 1, let other = [";", "\t", "|"].first(where: { (s: String) in header[0].contains(s) }) else { return "" }
        return "; fields are separated by commas, and this header is one field holding \(Echo.quoted(other))"
    }

    public mutating func readRow() throws -> [String]? {
        var row: [String] = []
        var field: [UInt8] = []
        var quoted = false, wasQuoted = false, any = false
        let startLine = line
        var quoteLine = line  // where the last quoted field opened
        row.reserveCapacity(8)
        func endField() throws {
            let s = try field.withUnsafeBufferPointer { try Self.field($0, index: row.count + 1, line: startLine) }
            row.append(s); field.removeAll(keepingCapacity: true); wasQuoted = false
        }
        // A quoted field followed by more than a comma or the line's end. Most
        // often a quote escaped with a backslash (Spark's default), which CSV
        // does not know: the quote closed the field early.
        func goesOnAfterQuote() -> InputError {
            InputError("field \(row.count + 1), quoted, goes on after its closing quote: "
                       + (field.last == 0x5C ? "a quote inside a quoted field is written twice (\"\"), not after a backslash (Spark: write with option escape='\"')"
                                             : "a field is quoted whole or not at all, and a comma or the line's end follows the closing quote")
                       // A quote left open takes in the lines after it: name the line it opened on.
                       + (quoteLine == line ? "" : " (its quote opened on line \(quoteLine) and closed on line \(line): is a closing quote missing there?)"),
                       item: "line \(quoteLine)")
        }
        while true {
            if !quoted && !wasQuoted && field.isEmpty && position < buffer.count {
                // Most fields are plain and end inside the chunk at hand: made
                // straight from the buffer, not byte by byte. Anything else
                // (a quote, a CR, the chunk's end) is left to the loop below.
                let start = position
                let end: Int? = buffer.withUnsafeBufferPointer { b in
                    var i = start
                    while i < b.count {
                        let c = b[i]
                        if c == 0x2C || c == 0x0A { return i }
                        if c == 0x0D || c == 0x22 { return nil }
                        i += 1
                    }
                    return nil
                }
                if let end {
                    let s = try buffer.withUnsafeBufferPointer { try Self.field(UnsafeBufferPointer(rebasing: $0[start..<end]), index: row.count + 1, line: startLine) }
                    any = true
                    row.append(s)
                    position = end + 1
                    if buffer[end] == 0x0A { line += 1; return row }
                    continue
                }
            }
            guard let b = try byte() else { break }
            any = true
            if quoted {
                if b == 0x22 {
                    if position < buffer.count, buffer[position] == 0x22 { position += 1; field.append(0x22) }
                    else if position >= buffer.count, let n = try byte() {
                        if n == 0x22 { field.append(0x22) } else { quoted = false; position -= 1 }
                    } else { quoted = false }
                } else {
                    // Lines are counted as outside quotes: a CRLF is one.
                    if b == 0x0D || (b == 0x0A && field.last != 0x0D) { line += 1 }
                    field.append(b)
                }
                continue
            }
            switch b {
            case 0x22:
                guard field.isEmpty && !wasQuoted else {
                    if wasQuoted { throw goesOnAfterQuote() }
                    // ` "Mon,Tue"`, as typed by hand: the quote must come first.
                    if field.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                        throw InputError("field \(row.count + 1) has spaces before its opening quote: a quoted field begins with the quote "
                                         + "(`,\"a,b\"` not `, \"a,b\"`)", item: "line \(line)")
                    }
                    throw InputError("stray quote inside unquoted field \(row.count + 1): a field with a quote is quoted whole, its quotes doubled",
                                     item: "line \(line)")
                }
                quoted = true; wasQuoted = true; quoteLine = line
            case 0x2C: try endField()
            case 0x0A, 0x0D:
                // CRLF is one line end: the LF after a CR is consumed with it.
                if b == 0x0D, let n = try byte(), n != 0x0A { position -= 1 }
                line += 1
                try endField()
                return row
            default:
                // `"ab"c` is no CSV field: a quoted field ends at its closing
                // quote, and what follows must end it (a comma or the line's
                // end), not be glued on as some readers do.
                guard !wasQuoted else { throw goesOnAfterQuote() }
                field.append(b)
            }
        }
        if quoted { throw InputError("unterminated quoted field \(row.count + 1): its closing quote never comes", item: "line \(startLine)") }
        if !any { return nil }
        try endField()
        return row
    }
}

public enum CSVFile {
    /// All rows of a small file (conditions).
    public static func read(path: String) throws -> [[String]] {
        let file = try FileChunks(path: path)
        var reader = CSVReader(chunks: file.next)
        var rows: [[String]] = []
        do { while let r = try reader.readRow() { rows.append(r) } } catch let e as InputError { throw e.located(file: path) }
        return rows
    }
}
