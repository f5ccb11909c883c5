import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A prepared statement. Finalized when released.
public final class Statement {
    public let handle: OpaquePointer
    public let sql: String
    private let connection: Connection

    init(_ handle: OpaquePointer, connection: Connection, sql: String) {
        self.handle = handle; self.connection = connection; self.sql = sql
    }

    deinit { _ = sqlite.pointee.finalize!(handle) }

    public func bind(_ values: [SQLiteValue]) throws {
        _ = sqlite.pointee.reset!(handle)
        _ = sqlite.pointee.clear_bindings!(handle)
        for (i, v) in values.enumerated() { try bind(v, at: Int32(i + 1)) }
    }

    public func bind(_ value: SQLiteValue, at index: Int32) throws {
        let api = sqlite.pointee
        let rc: Int32
        switch value {
        case .null: rc = api.bind_null!(handle, index)
        case .integer(let i): rc = api.bind_int64!(handle, index, i)
        case .real(let d): rc = api.bind_double!(handle, index, d)
        case .text(let s):
            // Bound with its byte length, so text is stored whole (a NUL inside it too).
            var s = s
            rc = s.withUTF8 { b in
                guard let base = b.baseAddress, b.count > 0 else { return api.bind_text!(handle, index, "", 0, SQLITE_TRANSIENT_DESTRUCTOR) }
                guard b.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
                return base.withMemoryRebound(to: CChar.self, capacity: b.count) {
                    api.bind_text!(handle, index, $0, Int32(b.count), SQLITE_TRANSIENT_DESTRUCTOR)
                }
            }
        case .blob(let b):
            rc = b.withUnsafeBytes { api.bind_blob!(handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(b.count), SQLITE_TRANSIENT_DESTRUCTOR) }
        }
        try connection.check(rc, sql)
    }

    /// Binds one value in place, leaving the others bound: for a statement
    /// run once per row of a large output, where building an array of
    /// values per row cost more than SQLite's own work.
    public func bind(integer value: Int64, at index: Int32) throws {
        try connection.check(sqlite.pointee.bind_int64!(handle, index, value), sql)
    }

    public func bind(real value: Double, at index: Int32) throws {
        try connection.check(sqlite.pointee.bind_double!(handle, index, value), sql)
    }

    /// Text, copied by SQLite (its UTF-8 bytes with their length: no C string made).
    public func bind(text value: String, at index: Int32) throws {
        var value = value
        let rc = value.withUTF8 { b in
            sqlite.pointee.bind_text64!(handle, index, UnsafeRawPointer(b.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                                          .assumingMemoryBound(to: CChar.self), UInt64(b.count), SQLITE_TRANSIENT_DESTRUCTOR,
                                        UInt8(SQLITE_UTF8))
        }
        try connection.check(rc, sql)
    }

    /// A string constant, which SQLite reads in place.
    public func bind(staticText value: StaticString?, at index: Int32) throws {
        guard let value else { return try bindNull(at: index) }
        let rc = value.withUTF8Buffer { b in
            sqlite.pointee.bind_text64!(handle, index, UnsafeRawPointer(b.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                                          .assumingMemoryBound(to: CChar.self), UInt64(b.count), nil, UInt8(SQLITE_UTF8))
        }
        try connection.check(rc, sql)
    }

    /// Binds text that SQLite reads in place during `body` (which steps the
    /// statement), without copying it; unbound again before returning, so
    /// the statement never keeps a pointer to memory that may go.
    public func withBound<T>(text value: String, at index: Int32, _ body: () throws -> T) throws -> T {
        var value = value
        return try value.withUTF8 { b in
            let rc = sqlite.pointee.bind_text64!(handle, index, UnsafeRawPointer(b.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                                                   .assumingMemoryBound(to: CChar.self), UInt64(b.count), nil, UInt8(SQLITE_UTF8))
            try connection.check(rc, sql)
            defer { _ = sqlite.pointee.bind_null!(handle, index) }
            return try body()
        }
    }

    public func bindNull(at index: Int32) throws {
        try connection.check(sqlite.pointee.bind_null!(handle, index), sql)
    }

    /// Runs a statement bound value by value to completion and resets it,
    /// keeping its bindings for the next row.
    public func runBound() throws {
        while try step() {}
        _ = sqlite.pointee.reset!(handle)
    }

    /// Advances; true while there is a row. A failed step resets the
    /// statement before it throws: a statement left in its error state would
    /// keep its read snapshot, so every later use of the connection (and a
    /// WAL checkpoint) would be held at it.
    public func step() throws -> Bool {
        if Interruption.isRequested { _ = sqlite.pointee.reset!(handle); throw Interruption.error(sql) }
        let rc = sqlite.pointee.step!(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let e = connection.error(rc, sql)
        _ = sqlite.pointee.reset!(handle)
        throw e
    }

    /// Binds, runs to completion, and resets: for INSERT/UPDATE/DELETE.
    public func run(_ values: [SQLiteValue]) throws {
        try bind(values)
        while try step() {}
        _ = sqlite.pointee.reset!(handle)
    }

    public var columnCount: Int { Int(sqlite.pointee.column_count!(handle)) }
    public func columnName(_ i: Int) -> String { sqlite.pointee.column_name!(handle, Int32(i)).map { String(cString: $0) } ?? "" }
    public var columnNames: [String] { (0..<columnCount).map(columnName) }

    /// Whether column `i` is text whose bytes are not UTF-8 (`value(i)`
    /// would repair them into U+FFFD: two such ids would read as one).
    public func isMalformedText(_ i: Int) -> Bool {
        sqlite.pointee.column_type!(handle, Int32(i)) == SQLITE_TEXT && validText(i) == nil
    }

    /// Column `i` as a String when it is text whose bytes are UTF-8; nil for
    /// anything else (read in one pass, where `value` would repair the bytes).
    public func validText(_ i: Int) -> String? {
        let api = sqlite.pointee
        let c = Int32(i)
        guard api.column_type!(handle, c) == SQLITE_TEXT, let p = api.column_text!(handle, c) else { return nil }
        return String(validating: UnsafeBufferPointer(start: p, count: Int(api.column_bytes!(handle, c))), as: UTF8.self)
    }

    /// A TEXT column's bytes without copying them; valid only inside `body`.
    public func withText<T>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let c = Int32(i)
        let p = sqlite.pointee.column_text!(handle, c)
        let n = Int(sqlite.pointee.column_bytes!(handle, c))
        return try body(UnsafeBufferPointer(start: n > 0 ? p : nil, count: n))
    }

    public func value(_ i: Int) -> SQLiteValue {
        let api = sqlite.pointee
        let c = Int32(i)
        switch api.column_type!(handle, c) {
        case SQLITE_INTEGER: return .integer(api.column_int64!(handle, c))
        case SQLITE_FLOAT: return .real(api.column_double!(handle, c))
        case SQLITE_TEXT:
            // All column_bytes of it: text is read whole, as it was bound.
            guard let p = api.column_text!(handle, c) else { return .text("") }
            let n = Int(api.column_bytes!(handle, c))
            return .text(String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self))
        case SQLITE_BLOB:
            let n = Int(api.column_bytes!(handle, c))
            guard n > 0, let p = api.column_blob!(handle, c) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: p, count: n)))
        default: return .null
        }
    }

    public var row: [SQLiteValue] { (0..<columnCount).map(value) }

    /// A BLOB column's bytes without copying them; valid only inside `body`.
    public func withBlob<T>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let c = Int32(i)
        let p = sqlite.pointee.column_blob!(handle, c)
        let n = Int(sqlite.pointee.column_bytes!(handle, c))
        return try body(UnsafeRawBufferPointer(start: n > 0 ? p : nil, count: n))
    }

    /// Ends the current run early, releasing its read lock.
    public func reset() { _ = sqlite.pointee.reset!(handle) }

    /// Whether columns `range` of the current row are all NULL.
    public func areNull(_ range: ClosedRange<Int>) -> Bool {
        range.allSatisfy { sqlite.pointee.column_type!(handle, Int32($0)) == SQLITE_NULL }
    }

    /// Whether column `i` of the current row is text of exactly `bytes`,
    /// compared in place (no String is made).
    public func isText(_ i: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let api = sqlite.pointee
        let c = Int32(i)
        guard api.column_type!(handle, c) == SQLITE_TEXT, let p = api.column_text!(handle, c),
              Int(api.column_bytes!(handle, c)) == bytes.count else { return false }
        return bytes.isEmpty || memcmp(p, bytes.baseAddress!, bytes.count) == 0
    }

    /// Whether column `i` of the current row is a BLOB.
    public func isBlob(_ i: Int) -> Bool { sqlite.pointee.column_type!(handle, Int32(i)) == SQLITE_BLOB }

    /// Whether the statement is stepping (has begun and not been reset).
    public var isBusy: Bool { sqlite.pointee.stmt_busy!(handle) != 0 }
}

/// Statements prepared on first use and kept: for code that runs the same
/// SQL once per row of a large input (import, judgement).
public final class StatementCache {
    private let db: Connection
    private var statements: [String: Statement] = [:]
    public init(_ db: Connection) { self.db = db }

    public func get(_ sql: String) throws -> Statement {
        if let s = statements[sql] { return s }
        let s = try db.prepare(sql)
        statements[sql] = s
        return s
    }
}
