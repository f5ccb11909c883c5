import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// An error SQLite reported, with the statement that caused it.
public struct SQLiteError: Error, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var sql: String?
    /// The operating system's errno of the failed file operation behind an
    /// SQLITE_IOERR_… or SQLITE_CANTOPEN (ENOSPC for a full disk), else 0.
    public var systemErrno: Int32 = 0

    /// True when the disk was full: SQLITE_FULL, or an I/O error whose file
    /// operation failed with ENOSPC (making or growing a -shm or -wal file).
    public var isDiskFull: Bool {
        code & 0xFF == SQLITE_FULL || (code & 0xFF == SQLITE_IOERR && systemErrno == ENOSPC)
    }

    /// One line, whatever the statement's layout: its line breaks become spaces.
    public var description: String {
        sql.map { "\(message) (SQLite \(code), in: \(String($0.prefix(120).map { $0.isNewline ? " " : $0 }))\($0.count > 120 ? " …" : ""))" }
            ?? "\(message) (SQLite \(code))"
    }
}
