import CSQLite

/// An error SQLite reported, with the statement that caused it.
public struct SQLiteError: Error, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var sql: String?

    public var description: String {
        sql.map { "\(message) (SQLite \(code), in: \($0.prefix(120)))" } ?? "\(message) (SQLite \(code))"
    }
}
