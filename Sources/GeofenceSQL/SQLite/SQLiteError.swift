import CSQLite

/// An error SQLite reported, with the statement that caused it.
public struct SQLiteError: Error, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var sql: String?

    /// One line, whatever the statement's layout: its line breaks become spaces.
    public var description: String {
        sql.map { "\(message) (SQLite \(code), in: \(String($0.prefix(120).map { $0.isNewline ? " " : $0 }))\($0.count > 120 ? " …" : ""))" }
            ?? "\(message) (SQLite \(code))"
    }
}
