import CSQLite
import GeofenceCore

/// Registers Swift closures as SQL scalar functions.
///
/// One C trampoline serves every function: SQLite hands back the closure's box
/// as the function's user data. A closure reports bad input by throwing
/// `FunctionError`, which becomes an SQL error naming the function and the
/// argument; nothing in here traps, so a bad call never takes the host down.
public struct FunctionError: Error, CustomStringConvertible {
    public var message: String
    /// The result code the caller sees: SQLITE_ERROR, or SQLITE_BUSY for a
    /// call to retry.
    public var code: Int32
    public init(_ message: String, code: Int32 = SQLITE_ERROR) { self.message = message; self.code = code }
    public var description: String { message }
}

/// A function's name and argument names, for error messages. One per
/// registration, alive as long as the function is (its box holds it).
public final class FunctionSignature: Sendable {
    public let name: String
    public let argumentNames: [String]
    public init(name: String, argumentNames: [String]) { self.name = name; self.argumentNames = argumentNames }
}

/// The arguments of one call, with checked accessors.
public struct Arguments {
    /// Unowned and unretained: the signature outlives every call, and a retain
    /// and release of its strings on each of millions of rows is measurable.
    unowned(unsafe) let signature: FunctionSignature
    public var function: String { signature.name }
    let argv: UnsafeMutablePointer<OpaquePointer?>?
    public let count: Int
    /// The call's context; nil for a table-valued function's arguments.
    public let context: OpaquePointer?

    func raw(_ i: Int) -> OpaquePointer { argv![i]! }

    public func isNull(_ i: Int) -> Bool { sqlite.pointee.value_type!(raw(i)) == SQLITE_NULL }
    public func isBlob(_ i: Int) -> Bool { sqlite.pointee.value_type!(raw(i)) == SQLITE_BLOB }

    func name(_ i: Int) -> String {
        let names = signature.argumentNames
        return i < names.count ? "\(i + 1) (\(names[i]))" : "\(i + 1)"
    }

    public func fail(_ i: Int, _ message: String) -> FunctionError {
        FunctionError("\(function): argument \(name(i)) \(message)")
    }

    public func double(_ i: Int) throws -> Double {
        let v = raw(i)
        switch sqlite.pointee.value_type!(v) {
        case SQLITE_INTEGER, SQLITE_FLOAT:
            let d = sqlite.pointee.value_double!(v)
            guard d.isFinite else { throw fail(i, "must be finite") }
            return d
        case SQLITE_TEXT:
            // Decimal text is a number too (not hexadecimal: see NumberText).
            // The text is named: '' (an empty CSV field as sqlite3's .import
            // stores it) and '10 m' call for different mends.
            let t = text(of: v)
            guard let d = NumberText.double(t.trimmingEdgeSpaces()), d.isFinite else {
                throw fail(i, "must be a number, got text \(Echo.quoted(t))")
            }
            return d
        case SQLITE_BLOB:
            throw fail(i, "must be a number, got a BLOB")
        default:
            throw fail(i, "must be a number")
        }
    }

    /// The value's text, all `value_bytes` of it (a NUL inside included).
    func text(of v: OpaquePointer) -> String {
        guard let p = sqlite.pointee.value_text!(v) else { return "" }
        let n = Int(sqlite.pointee.value_bytes!(v))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    /// `text(of:)`, nil when its bytes are not UTF-8.
    func validText(of v: OpaquePointer) -> String? {
        guard let p = sqlite.pointee.value_text!(v) else { return "" }
        return String(validating: UnsafeBufferPointer(start: p, count: Int(sqlite.pointee.value_bytes!(v))), as: UTF8.self)
    }

    /// The first bytes of the value's text in hex, for a message about them.
    func hexPrefix(of v: OpaquePointer) -> String {
        guard let p = sqlite.pointee.value_text!(v) else { return "" }
        let n = Int(sqlite.pointee.value_bytes!(v))
        return Echo.hex(UnsafeBufferPointer(start: p, count: min(n, 32))) + (n > 32 ? "…" : "")
    }

    /// A text argument. Text holding a NUL character is refused: ids and
    /// times are compared and stored whole, but C callers, error messages and
    /// other tools read text only up to a NUL, so `walk\0er` would be shown
    /// (and elsewhere taken) as `walk`. Text that is not UTF-8 is refused
    /// too: repaired into U+FFFD, `b\xff` and `b\xfe` would be one id.
    ///
    /// A REAL is written as Swift writes a Double (the shortest text that
    /// reads back as the same value, as a table's REAL column is read by
    /// `judge --table`), not as SQLite's 15 significant digits, which would
    /// cut a Unix time's microseconds.
    public func text(_ i: Int) throws -> String {
        let v = raw(i)
        switch sqlite.pointee.value_type!(v) {
        case SQLITE_FLOAT:
            return "\(sqlite.pointee.value_double!(v))"
        case SQLITE_TEXT, SQLITE_INTEGER:
            guard let s = validText(of: v) else { throw fail(i, "is not UTF-8 text (bytes \(hexPrefix(of: v)))") }
            guard !s.utf8.contains(0) else { throw fail(i, "holds a NUL character (U+0000), which no text here may hold: \(Echo.quoted(s))") }
            return s
        default: throw fail(i, "must be text")
        }
    }

    /// A time argument as the text `Timestamp.parse` reads: `text(i)`, but a
    /// REAL as plain decimal Unix seconds (`1e-05` is `0.00001`).
    public func timeText(_ i: Int) throws -> String {
        let v = raw(i)
        if sqlite.pointee.value_type!(v) == SQLITE_FLOAT { return Timestamp.unixSecondsText(sqlite.pointee.value_double!(v)) }
        return try text(i)
    }

    /// The argument's bytes, valid only during `body`.
    public func withBlob<T>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        let v = raw(i)
        guard sqlite.pointee.value_type!(v) == SQLITE_BLOB else { throw fail(i, "must be a geometry BLOB") }
        let n = Int(sqlite.pointee.value_bytes!(v))
        let p = sqlite.pointee.value_blob!(v)
        return try body(UnsafeRawBufferPointer(start: n > 0 ? p : nil, count: n))
    }

    public var connection: Connection { Connection(borrowing: sqlite.pointee.context_db_handle!(context!)!) }
}

final class FunctionBox {
    let signature: FunctionSignature
    let body: (Arguments) throws -> SQLiteValue
    init(name: String, argumentNames: [String], body: @escaping (Arguments) throws -> SQLiteValue) {
        self.signature = FunctionSignature(name: name, argumentNames: argumentNames); self.body = body
    }
}

public enum FunctionFlags {
    /// Pure functions of their arguments: usable in indexes, views and triggers.
    public static let pure = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
    /// Reads the database: safe, but not deterministic.
    public static let reading = SQLITE_UTF8 | SQLITE_INNOCUOUS
    /// Changes state: callable only from top-level SQL, never from a schema's
    /// triggers or views, so a hostile database cannot fire it.
    public static let changing = SQLITE_UTF8 | SQLITE_DIRECTONLY
}

private let trampoline: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { ctx, argc, argv in
    guard let ctx else { return }
    // The box lives as long as the function (SQLite releases it through
    // `destroy`): borrowed, not retained, as is the closure it holds, so a
    // call per row pays no reference counting for either.
    Unmanaged<FunctionBox>.fromOpaque(sqlite.pointee.user_data!(ctx)!)._withUnsafeGuaranteedRef { box in
        let args = Arguments(signature: box.signature, argv: argv, count: Int(argc), context: ctx)
        do {
            setResult(ctx, try box.body(args))
        } catch let e as FunctionError {
            sqlite.pointee.result_error!(ctx, e.message, -1)
            if e.code != SQLITE_ERROR { sqlite.pointee.result_error_code!(ctx, e.code) }
        } catch let e as SQLiteError {
            // The host sees SQLite's own code (SQLITE_FULL, SQLITE_BUSY, …), after the message.
            sqlite.pointee.result_error!(ctx, "\(box.signature.name): \(e.message)", -1)
            sqlite.pointee.result_error_code!(ctx, e.code)
        } catch {
            sqlite.pointee.result_error!(ctx, "\(box.signature.name): \(error)", -1)
        }
    }
}

private let destroy: @convention(c) (UnsafeMutableRawPointer?) -> Void = { p in
    if let p { Unmanaged<FunctionBox>.fromOpaque(p).release() }
}

func setResult(_ ctx: OpaquePointer, _ value: SQLiteValue) {
    let api = sqlite.pointee
    switch value {
    case .null: api.result_null!(ctx)
    case .integer(let i): api.result_int64!(ctx, i)
    case .real(let d): api.result_double!(ctx, d)
    case .text(let s):
        var s = s
        s.withUTF8 { b in
            guard let base = b.baseAddress, b.count > 0 else { api.result_text!(ctx, "", 0, SQLITE_TRANSIENT_DESTRUCTOR); return }
            guard b.count <= Int(Int32.max) else { api.result_error_toobig!(ctx); return }
            base.withMemoryRebound(to: CChar.self, capacity: b.count) { api.result_text!(ctx, $0, Int32(b.count), SQLITE_TRANSIENT_DESTRUCTOR) }
        }
    case .blob(let b):
        b.withUnsafeBytes { api.result_blob!(ctx, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(b.count), SQLITE_TRANSIENT_DESTRUCTOR) }
    }
}

extension Connection {
    /// Registers `body` as `name` for each argument count in `arities`
    /// (`argumentNames` label the arguments in error messages).
    public func createFunction(_ name: String, arities: [Int], argumentNames: [String], flags: Int32,
                               _ body: @escaping (Arguments) throws -> SQLiteValue) throws {
        for n in arities {
            let box = Unmanaged.passRetained(FunctionBox(name: name, argumentNames: argumentNames, body: body)).toOpaque()
            let rc = sqlite.pointee.create_function_v2!(handle, name, Int32(n), flags, box, trampoline, nil, nil, destroy)
            try check(rc, "create function \(name)")
        }
    }
}
