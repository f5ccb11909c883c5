import CSQLite
import GeofenceCore

/// A value as SQLite stores it; what statements bind and rows return.
public enum SQLiteValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public var isNull: Bool { if case .null = self { return true }; return false }

    public var int64: Int64? {
        switch self { case .integer(let i): i; case .real(let d) where d == d.rounded(): Int64(exactly: d); default: nil }
    }
    public var double: Double? {
        switch self { case .integer(let i): Double(i); case .real(let d): d; default: nil }
    }
    /// A column that holds text (a number is read as its text) or NULL, as
    /// `string` reads it; a BLOB, which `string` reads as nothing (a time
    /// zone as none: the catalog's, silently), is an input error of `field`.
    public func text(field: String) throws -> String? {
        guard case .blob = self else { return string }
        throw InputError("must be text or empty, got a BLOB", field: field)
    }

    public var string: String? {
        switch self { case .text(let s): s; case .integer(let i): String(i); case .real(let d): "\(d)"; default: nil }
    }
}

extension Optional where Wrapped == String {
    public var sqlValue: SQLiteValue { map(SQLiteValue.text) ?? .null }
}
extension Optional where Wrapped == Double {
    public var sqlValue: SQLiteValue { map(SQLiteValue.real) ?? .null }
}
extension Optional where Wrapped == Int {
    public var sqlValue: SQLiteValue { map { .integer(Int64($0)) } ?? .null }
}
extension Optional where Wrapped == Int64 {
    public var sqlValue: SQLiteValue { map(SQLiteValue.integer) ?? .null }
}
