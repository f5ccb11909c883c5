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

    /// What a program is told of its write transactions, so that a signal
    /// during one can request the rollback instead of ending the process at
    /// once. Set once by the program, before it opens a database.
    public struct Observer {
        /// The transaction has begun (BEGIN IMMEDIATE succeeded).
        public var began: () -> Void
        /// Runs the COMMIT (calling its argument once): the CLI holds its signals across it.
        public var committing: (() throws -> Void) throws -> Void
        /// The transaction has ended: committed, or rolled back.
        public var ended: (_ committed: Bool) -> Void

        public init(began: @escaping () -> Void, committing: @escaping (() throws -> Void) throws -> Void,
                    ended: @escaping (_ committed: Bool) -> Void) {
            self.began = began; self.committing = committing; self.ended = ended
        }
    }
    nonisolated(unsafe) public static var observer: Observer?
}
