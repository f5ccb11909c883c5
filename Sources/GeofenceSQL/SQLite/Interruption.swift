import CSQLite
import Synchronization

/// A request to end the write transaction under way, made from a signal
/// handler (the CLI on SIGINT, SIGTERM or SIGHUP).
///
/// Once it is made, every statement stepped fails with SQLITE_INTERRUPT
/// before it runs, so the transaction's body throws and `transaction` rolls
/// it back: the database is left as it was, with no hot journal or unused
/// WAL behind, and the program ends once the rollback is done. A flag read
/// at each step, not `sqlite3_interrupt`, because that is lost when it comes
/// between two statements, as most signals during a judgement do (the
/// judging threads work while no statement runs).
///
/// Only a program that owns its process makes the request: the SQL functions
/// never do.
public enum Interruption {
    private static let requested = Atomic<Bool>(false)

    /// Safe in a signal handler: one atomic store.
    public static func request() { requested.store(true, ordering: .relaxed) }
    public static var isRequested: Bool { requested.load(ordering: .relaxed) }

    static func error(_ sql: String?) -> SQLiteError {
        SQLiteError(code: SQLITE_INTERRUPT, message: "interrupted", sql: sql)
    }

    /// Told when a write transaction has begun and when it has ended
    /// (committed or rolled back), so that a signal meanwhile can request
    /// the rollback instead of ending the process at once. Set once by the
    /// program, before it opens a transaction.
    nonisolated(unsafe) public static var observer: (began: () -> Void, ended: (_ committed: Bool) -> Void)?
}
