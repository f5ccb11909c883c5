import CArrow
import GeofenceCore

/// A record batch handed over through the Arrow C Data Interface, read in
/// place: a struct array ("+s") whose children are the columns, found by
/// name. Nothing is copied but the values asked for.
///
///     let batch = try ArrowBatch(array, schema, name: "fixes")
///     let ts = try batch.column("ts", [.text, .timestamp])
///     ts.text(row)  /  ts.microseconds(row)  /  ts.isNull(row)
///
/// The batch is only read; releasing it stays with its holder. Every
/// length, offset and buffer is checked against what its format needs
/// before a value is read, so a malformed batch is an error naming the
/// column, never a read out of bounds.
struct ArrowBatch {
    let array: UnsafePointer<ArrowArray>
    let schema: UnsafePointer<ArrowSchema>
    /// What the batch is to the user ("fixes", "states"), for errors.
    let name: String
    var rows: Int { Int(array.pointee.length) }

    init(_ array: UnsafePointer<ArrowArray>, _ schema: UnsafePointer<ArrowSchema>, name: String) throws {
        self.array = array; self.schema = schema; self.name = name
        guard array.pointee.release != nil, schema.pointee.release != nil else { throw InputError("the \(name) batch was released already") }
        guard let format = schema.pointee.format, String(cString: format) == "+s" else {
            throw InputError("the \(name) batch is not a record batch (Arrow struct \"+s\")")
        }
        guard array.pointee.n_children == schema.pointee.n_children, array.pointee.length >= 0, array.pointee.offset >= 0,
              array.pointee.n_children == 0 || (array.pointee.children != nil && schema.pointee.children != nil) else {
            throw InputError("the \(name) batch's array does not match its schema")
        }
        if array.pointee.null_count != 0 { throw InputError("the \(name) batch has null rows (a null struct), which no record batch has") }
    }

    /// The kinds of column a caller accepts.
    enum Kind { case text, number, integer, timestamp }

    /// The column called `name`, of one of `kinds`; nil if the batch has
    /// none. A column of another type is refused naming it and its type.
    func column(_ columnName: String, _ kinds: [Kind]) throws -> ArrowColumn? {
        for i in 0..<Int(schema.pointee.n_children) {
            guard let s = schema.pointee.children[i], let a = array.pointee.children[i],
                  let n = s.pointee.name, String(cString: n) == columnName else { continue }
            let format = s.pointee.format.map { String(cString: $0) } ?? ""
            guard let column = ArrowColumn(a, format: format, rowOffset: Int(array.pointee.offset), rows: rows),
                  kinds.contains(column.kind) else {
                throw InputError("\(name) column \(columnName) has the Arrow type \(Echo.quoted(format)), not \(Self.describe(kinds))")
            }
            try column.checkBuffers(rows: rows, what: "\(name) column \(columnName)")
            return column
        }
        return nil
    }

    static func describe(_ kinds: [Kind]) -> String {
        kinds.map {
            switch $0 {
            case .text: "a string (utf8 or large utf8)"
            case .number: "a number (float64, float32, int64 or int32)"
            case .integer: "an integer (int64 or int32)"
            case .timestamp: "a timestamp with a time zone"
            }
        }.joined(separator: " or ")
    }
}

/// One column of an `ArrowBatch`, read by row (0-based within the batch).
struct ArrowColumn {
    enum Layout { case utf8, largeUtf8, float64, float32, int64, int32, timestamp(perSecond: Int64) }
    let layout: Layout
    let array: UnsafePointer<ArrowArray>
    /// The parent's offset and the column's own, added to a row.
    let start: Int

    init?(_ array: UnsafePointer<ArrowArray>, format: String, rowOffset: Int, rows: Int) {
        switch format {
        case "u": layout = .utf8
        case "U": layout = .largeUtf8
        case "g": layout = .float64
        case "f": layout = .float32
        case "l": layout = .int64
        case "i": layout = .int32
        default:
            // A timestamp with a zone is an instant ("tsu:UTC", "tsn:Europe/Paris"); one without ("tsu:") is a wall time.
            guard format.count > 4, format.hasPrefix("ts"), Array(format.utf8)[3] == UInt8(ascii: ":") else { return nil }
            switch Array(format.utf8)[2] {
            case UInt8(ascii: "s"): layout = .timestamp(perSecond: 1)
            case UInt8(ascii: "m"): layout = .timestamp(perSecond: 1_000)
            case UInt8(ascii: "u"): layout = .timestamp(perSecond: 1_000_000)
            case UInt8(ascii: "n"): layout = .timestamp(perSecond: 1_000_000_000)
            default: return nil
            }
        }
        self.array = array
        start = rowOffset + Int(array.pointee.offset)
    }

    var kind: ArrowBatch.Kind {
        switch layout {
        case .utf8, .largeUtf8: .text
        case .float64, .float32: .number
        case .int64, .int32: .integer
        case .timestamp: .timestamp
        }
    }

    private var buffers: UnsafePointer<UnsafeRawPointer?> { UnsafeRawPointer(array.pointee.buffers!).assumingMemoryBound(to: UnsafeRawPointer?.self) }

    /// Refuses a column whose buffers cannot hold `rows` rows from its offset.
    func checkBuffers(rows: Int, what: String) throws {
        let a = array.pointee
        let needed: Int
        switch layout { case .utf8, .largeUtf8: needed = 3; default: needed = 2 }
        guard a.n_buffers == needed, a.buffers != nil, a.offset >= 0, a.length >= Int64(start - Int(a.offset)) + Int64(rows),
              buffers[1] != nil, (a.null_count == 0 || buffers[0] != nil) else {
            throw InputError("\(what) is not a well-formed Arrow array (buffers, length or offset)")
        }
        if needed == 3, rows > 0 {
            guard buffers[2] != nil || offset(start + rows) == offset(start) else { throw InputError("\(what) has no data buffer") }
            guard offset(start) >= 0, offset(start + rows) >= offset(start) else { throw InputError("\(what) has offsets out of order") }
        }
    }

    /// Whether the value at `row` is null.
    func isNull(_ row: Int) -> Bool {
        guard array.pointee.null_count != 0, let bits = buffers[0] else { return false }
        let i = start + row
        return bits.load(fromByteOffset: i >> 3, as: UInt8.self) & (1 << UInt8(i & 7)) == 0
    }

    private func offset(_ i: Int) -> Int {
        switch layout {
        case .largeUtf8: Int(buffers[1]!.load(fromByteOffset: i * 8, as: Int64.self))
        default: Int(buffers[1]!.load(fromByteOffset: i * 4, as: Int32.self))
        }
    }

    /// The text at `row` (nil when null). Bytes that are not UTF-8 are
    /// refused, not repaired: two ids repaired alike would become one
    /// subject, and the CLI refuses such a field too.
    func text(_ row: Int) throws -> String? {
        if isNull(row) { return nil }
        let from = offset(start + row), to = offset(start + row + 1)
        guard to > from, let data = buffers[2] else { return "" }
        let bytes = UnsafeRawBufferPointer(start: data + from, count: to - from).bindMemory(to: UInt8.self)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw NotUTF8() }
        return text
    }

    /// A text value that is not UTF-8 (the caller names the row and column).
    struct NotUTF8: Error {}

    /// The number at `row` (nil when null).
    func number(_ row: Int) -> Double? {
        if isNull(row) { return nil }
        let i = start + row, b = buffers[1]!
        switch layout {
        case .float64: return b.load(fromByteOffset: i * 8, as: Double.self)
        case .float32: return Double(b.load(fromByteOffset: i * 4, as: Float.self))
        case .int64: return Double(b.load(fromByteOffset: i * 8, as: Int64.self))
        case .int32: return Double(b.load(fromByteOffset: i * 4, as: Int32.self))
        default: return nil
        }
    }

    /// The integer at `row` (nil when null or not an integer column).
    func integer(_ row: Int) -> Int64? {
        if isNull(row) { return nil }
        let i = start + row, b = buffers[1]!
        switch layout {
        case .int64: return b.load(fromByteOffset: i * 8, as: Int64.self)
        case .int32: return Int64(b.load(fromByteOffset: i * 4, as: Int32.self))
        default: return nil
        }
    }

    /// The instant at `row` as whole microseconds (nanoseconds rounded down); nil when null or out of range.
    func microseconds(_ row: Int) -> Int64? {
        guard case .timestamp(let perSecond) = layout, !isNull(row) else { return nil }
        let v = buffers[1]!.load(fromByteOffset: (start + row) * 8, as: Int64.self)
        switch perSecond {
        case 1_000_000_000: return (v - (v % 1_000 + 1_000) % 1_000) / 1_000
        default:
            let (m, overflow) = v.multipliedReportingOverflow(by: 1_000_000 / perSecond)
            return overflow ? nil : m
        }
    }
}
