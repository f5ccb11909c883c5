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

    /// Another connection held the lock it needed (SQLITE_BUSY, any extended code).
    public var isBusy: Bool { code & 0xFF == SQLITE_BUSY }

    /// A UNIQUE or PRIMARY KEY constraint refused the row
    /// (SQLITE_CONSTRAINT_UNIQUE, SQLITE_CONSTRAINT_PRIMARYKEY). Which
    /// constraint is not said: a caller asks the data which row is already
    /// there, never the message.
    public var isUniqueViolation: Bool { code == Self.constraintUnique || code == Self.constraintPrimaryKey }

    /// A trigger's RAISE(ABORT | FAIL | ROLLBACK, …) refused the statement
    /// (SQLITE_CONSTRAINT_TRIGGER): the catalog's own triggers or a user's.
    public var isRaisedByTrigger: Bool { code == Self.constraintTrigger }

    /// The statement could not be prepared or run for a reason SQLite gives
    /// only as text (SQLITE_ERROR: a missing table or column, a syntax
    /// error): a caller that needs to know which asks the schema.
    public var isPlainError: Bool { code == SQLITE_ERROR }

    // Extended result codes (sqlite3.h; Swift does not import these macros).
    static let constraintTrigger = SQLITE_CONSTRAINT | (7 << 8), constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
    static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

    /// One line, whatever the statement's layout: its line breaks become spaces.
    public var description: String {
        sql.map { "\(message) (SQLite \(code), in: \(String($0.prefix(120).map { $0.isNewline ? " " : $0 }))\($0.count > 120 ? " …" : ""))" }
            ?? "\(message) (SQLite \(code))"
    }
}
