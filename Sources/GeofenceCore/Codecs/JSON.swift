// Longer than 300 lines: the streaming reader, its value type and its located errors are one codec; splitting them would spread one grammar over files.
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A JSON value. Objects keep their members in file order (free properties
/// round-trip as written); numbers keep their source text, so an integer id
/// beyond 2^53 is not silently rounded.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (l: JSONValue, r: JSONValue) -> Bool {
        switch (l, r) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b || Double(a) == Double(b)
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members.first(where: { $0.0 == key })?.1 }
        return nil
    }

    public var typeName: String {
        switch self {
        case .null: "null"; case .bool: "boolean"; case .number: "number"
        case .string: "string"; case .array: "array"; case .object: "object"
        }
    }

    /// Compact JSON text.
    public var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    public func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            out += "["
            for (i, v) in items.enumerated() { if i > 0 { out += "," }; v.write(to: &out) }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (k, v)) in members.enumerated() {
                if i > 0 { out += "," }
                JSONValue.writeString(k, to: &out); out += ":"; v.write(to: &out)
            }
            out += "}"
        }
    }

    public static func writeString(_ s: String, to out: inout String) {
        out += "\""
        // Most strings need no escape: appended whole, not scalar by scalar.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += s
            out += "\""
            return
        }
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }

    /// `s` as a JSON string appended as UTF-8 bytes, the same text as
    /// `writeString`. In valid UTF-8 the bytes it escapes (below 0x20, quote,
    /// backslash) only ever stand for themselves, so each byte is tested alone.
    public static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most ids need no escape: tested and copied from the string's own
        // contiguous bytes (its UTF-8 view would be walked a byte at a time).
        var s = s
        let plain = s.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if plain {
            out.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), b]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let low = b & 15
                out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                        UInt8(ascii: "0") + (b >> 4), low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10]
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A string's or number's text, for naming a record in a message.
    public var plainText: String? {
        switch self { case .string(let s): s; case .number(let n): n; default: nil }
    }

    /// A JSON number for a Double: integral values without a fraction.
    public static func number(_ d: Double) -> JSONValue { .number(numberText(d)) }

    /// The shortest text that reads back as the same Double; integral values without ".0".
    public static func numberText(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : "\(d)"
    }
}

public struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int
    public var description: String { "line \(line), column \(column): \(message)" }
}

/// Byte-at-a-time JSON reader over any source of chunks, tracking line and
/// column for messages. Nesting deeper than `maxDepth` is refused rather than
/// recursed into, so a hostile file cannot exhaust the stack.
public struct JSONReader {
    public static let maxDepth = 256
    private var next: () throws -> [UInt8]?
    private var buffer: [UInt8] = []
    private var position = 0
    private var eof = false
    public private(set) var line = 1
    public private(set) var column = 1
    /// Input is refused when an object names a member twice or a string holds
    /// NUL. Off only for JSON this program wrote itself into a catalog, which
    /// an older version may have written with either.
    public var strict = true

    public init(chunks: @escaping () throws -> [UInt8]?) { self.next = chunks }

    public init(bytes: [UInt8]) {
        var given = false
        self.init(chunks: { if given { return nil }; given = true; return bytes })
    }

    public init(string: String) { self.init(bytes: Array(string.utf8)) }

    public func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(message: message, line: line, column: column)
    }

    @inline(__always)
    mutating func peek() throws -> UInt8? {
        if position < buffer.count { return buffer[position] }
        if eof { return nil }
        while true {
            guard let chunk = try next() else { eof = true; return nil }
            if chunk.isEmpty { continue }
            buffer = chunk; position = 0
            return buffer[0]
        }
    }

    @inline(__always)
    mutating func advance() -> UInt8 {
        let b = buffer[position]
        position += 1
        if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
        return b
    }

    /// Skips a UTF-8 byte-order mark at the very start (RFC 8259 §8.1 lets a
    /// parser ignore one; editors on Windows write it).
    public mutating func skipByteOrderMark() throws {
        guard line == 1, column == 1, try peek() == 0xEF else { return }
        _ = advance()
        for expected: UInt8 in [0xBB, 0xBF] {
            guard try peek() == expected else { throw error("byte 0xef at the start is not a byte-order mark (EF BB BF)") }
            _ = advance()
        }
        column = 1
    }

    public mutating func skipWhitespace() throws {
        while let b = try peek(), b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { _ = advance() }
    }

    /// `skipWhitespace`, telling whether it passed a line break (LF, CR, or a record separator 0x1E,
    /// which is skipped too): what separates the records of a GeoJSON sequence.
    public mutating func skipRecordSeparation() throws -> Bool {
        var separated = false
        while let b = try peek(), b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 || b == 0x1E {
            if b != 0x20 && b != 0x09 { separated = true }
            _ = advance()
        }
        return separated
    }

    // Punctuation is an ASCII Unicode.Scalar, not a Character: a Character's
    // asciiValue is computed through its string storage on every call, at
    // every punctuation mark of the file.
    public mutating func expect(_ c: Unicode.Scalar) throws {
        try skipWhitespace()
        guard let b = try peek() else { throw error("unexpected end of input, expected '\(c)'") }
        guard b == UInt8(truncatingIfNeeded: c.value) else { throw error("expected '\(c)', found \(Self.describe(b))") }
        _ = advance()
    }

    /// Consumes `c` (ASCII) if it is the next non-space byte.
    public mutating func consume(_ c: Unicode.Scalar) throws -> Bool {
        try skipWhitespace()
        if try peek() == UInt8(truncatingIfNeeded: c.value) { _ = advance(); return true }
        return false
    }

    public mutating func atEnd() throws -> Bool {
        try skipWhitespace()
        return try peek() == nil
    }

    static func describe(_ b: UInt8) -> String {
        b >= 0x20 && b < 0x7F ? "'\(Character(UnicodeScalar(b)))'" : "byte 0x\(String(b, radix: 16))"
    }

    public mutating func readValue(depth: Int = 0) throws -> JSONValue {
        try skipWhitespace()
        guard let b = try peek() else { throw error("unexpected end of input, expected a value") }
        switch b {
        case UInt8(ascii: "{"):
            guard depth < Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
            _ = advance()
            var members: [(String, JSONValue)] = []
            // A second member of the same name is refused (RFC 8259 leaves its
            // meaning open: parsers keep the first, the last, or both), so a
            // file cannot say one thing to this reader and another to the next.
            // Names are compared as their bytes, as a set past a few members.
            var names = Set<[UInt8]>()
            if try consume("}") { return .object(members) }
            repeat {
                try skipWhitespace()
                guard try peek() == UInt8(ascii: "\"") else {
                    throw error(try peek().map { "expected a member name, found \(Self.describe($0))" } ?? "unexpected end of input in an object")
                }
                let (keyLine, keyColumn) = (line, column)
                let key = try readString()
                let duplicate: Bool
                if members.count < 16 {
                    duplicate = members.contains { $0.0.utf8.elementsEqual(key.utf8) }
                } else {
                    if names.isEmpty { names = Set(members.map { Array($0.0.utf8) }) }
                    duplicate = !names.insert(Array(key.utf8)).inserted
                }
                if duplicate && strict {
                    throw JSONSyntaxError(message: "duplicate member name \(Echo.quoted(key)) in one object", line: keyLine, column: keyColumn)
                }
                try expect(":")
                members.append((key, try readValue(depth: depth + 1)))
            } while try consume(",")
            try expect("}")
            return .object(members)
        case UInt8(ascii: "["):
            guard depth < Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
            _ = advance()
            var items: [JSONValue] = []
            if try consume("]") { return .array(items) }
            repeat { items.append(try readValue(depth: depth + 1)) } while try consume(",")
            try expect("]")
            return .array(items)
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try readNumber())
        case UInt8(ascii: "N"), UInt8(ascii: "I"):
            throw error("NaN and Infinity are not JSON numbers")
        default:
            throw error("unexpected \(Self.describe(b)), expected a value")
        }
    }

    mutating func literal(_ word: String) throws {
        for c in word.utf8 {
            guard try peek() == c else { throw error("invalid literal, expected '\(word)'") }
            _ = advance()
        }
    }

    mutating func readNumber() throws -> String {
        // Coordinates are most of a GeoJSON file: gather the text on the stack,
        // on the heap only past 64 characters.
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            var count = 0
            var long: [UInt8]? = nil
            // Letters are gathered too, so `0x1p3` or `1.5f` is named whole as a malformed number.
            while let b = try peek(), (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2B || b == 0x2E || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A) {
                _ = advance()
                if count < buffer.count { buffer[count] = b; count += 1; continue }
                if long == nil { long = Array(buffer) }
                long!.append(b)
            }
            if let long { return try long.withUnsafeBufferPointer { try Self.checkedNumber($0, self) } }
            return try Self.checkedNumber(UnsafeBufferPointer(rebasing: buffer[0..<count]), self)
        }
    }

    /// The text as a String, if it follows RFC 8259's number grammar:
    /// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    private static func checkedNumber(_ text: UnsafeBufferPointer<UInt8>, _ reader: JSONReader) throws -> String {
        let s = String(decoding: text, as: UTF8.self)
        let count = text.count
        var i = 0
        func digits() -> Int { let s = i; while i < count, text[i] >= 0x30, text[i] <= 0x39 { i += 1 }; return i - s }
        if i < count, text[i] == 0x2D { i += 1 }
        let intStart = i
        let n = digits()
        var ok = n > 0 && !(n > 1 && text[intStart] == 0x30)
        if ok, i < count, text[i] == 0x2E { i += 1; ok = digits() > 0 }
        if ok, i < count, text[i] == 0x65 || text[i] == 0x45 {
            i += 1
            if i < count, text[i] == 0x2B || text[i] == 0x2D { i += 1 }
            ok = digits() > 0
        }
        guard ok, i == count else {
            let hex = count > 1 && (text[1] | 0x20 == 0x78 || (count > 2 && text[0] == 0x2D && text[2] | 0x20 == 0x78))
            throw reader.error("malformed number \(Echo.quoted(s))" + (hex ? ": JSON numbers are decimal, not hexadecimal" : ""))
        }
        return s
    }

    mutating func readString() throws -> String {
        _ = advance()  // opening quote
        var bytes: [UInt8] = []
        while true {
            guard let b = try peek() else { throw error("unterminated string") }
            _ = advance()
            if b == UInt8(ascii: "\"") { break }
            if b < 0x20 { throw error("control character in a string") }
            if b != UInt8(ascii: "\\") { bytes.append(b); continue }
            guard let e = try peek() else { throw error("unterminated escape") }
            _ = advance()
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(e)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if code == 0 && strict { throw error("\\u0000 (NUL) in a string: no text here may hold it (ids and text are read up to a NUL by C callers)") }
                if (0xD800..<0xDC00).contains(code) {
                    guard try peek() == UInt8(ascii: "\\") else { throw error("unpaired surrogate \\u\(String(code, radix: 16))") }
                    _ = advance()
                    guard try peek() == UInt8(ascii: "u") else { throw error("unpaired surrogate") }
                    _ = advance()
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(code) {
                    throw error("unpaired surrogate \\u\(String(code, radix: 16))")
                }
                bytes.append(contentsOf: Array(String(UnicodeScalar(code)!).utf8))
            default:
                throw error("invalid escape '\\\(Character(UnicodeScalar(e)))'")
            }
        }
        guard let s = String(validating: bytes, as: UTF8.self) else { throw error("string is not valid UTF-8") }
        return s
    }

    mutating func hex4() throws -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let b = try peek() else { throw error("unterminated \\u escape") }
            _ = advance()
            let d: UInt32
            switch b {
            case 0x30...0x39: d = UInt32(b - 0x30)
            case 0x41...0x46: d = UInt32(b - 0x41 + 10)
            case 0x61...0x66: d = UInt32(b - 0x61 + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            v = v * 16 + d
        }
        return v
    }

    /// Parses a whole document.
    public static func parse(_ text: String, strict: Bool = true) throws -> JSONValue {
        var r = JSONReader(string: text)
        r.strict = strict
        let v = try r.readValue()
        guard try r.atEnd() else { throw r.error("trailing characters after the JSON value") }
        return v
    }
}

/// Reads a file in 256 KiB chunks; the source for JSONReader on large files.
public final class FileChunks {
    private let file: UnsafeMutablePointer<FILE>
    public private(set) var bytesRead = 0
    public let size: Int

    public init(path: String) throws {
        guard let f = fopen(path, "rb") else {
            throw InputError(String(cString: strerror(errno)), file: path)
        }
        file = f
        var st = stat()
        size = fstat(fileno(f), &st) == 0 ? Int(st.st_size) : 0
    }

    deinit { fclose(file) }

    public func next() throws -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 1 << 18)
        let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        if n == 0 {
            if ferror(file) != 0 { throw InputError("read error", file: "") }
            return nil
        }
        bytesRead += n
        if n < chunk.count { chunk.removeSubrange(n...) }
        return chunk
    }
}
