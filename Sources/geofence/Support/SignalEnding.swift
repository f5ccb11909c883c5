#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import GeofenceSQL

/// How a command ends on SIGINT, SIGTERM or SIGHUP (Ctrl-C, a service
/// stopped, a terminal closed): by that signal (its exit status), with one
/// line on standard error saying what became of the database.
///
/// - Outside a write transaction, before any commit: at once; nothing was
///   changed (a WAL catalog's empty -wal and -shm may stay until it is next
///   opened).
/// - During a write transaction: the transaction is rolled back first
///   (`Interruption`: its next statement fails, and `transaction` rolls it
///   back), then `reporting` ends the process (`endBySignal`): the database
///   is as it was, with no hot journal or unused WAL left behind.
/// - Across every COMMIT the signals are held: ended during one, a process
///   could not tell whether its changes were committed.
/// - After a commit the command finishes (it prints its line or the rows
///   it wrote), then ends, saying the changes stand; but with an output to
///   see to (`TemporaryFiles.afterCommit`), at once, putting it in place.
/// - A second signal, or a rollback not done within `rollbackSeconds`, ends
///   the process at once; SQLite then rolls a transaction that was under
///   way back when the database is next opened.
///
/// A signal the process inherited as ignored (`nohup` ignores SIGHUP) stays
/// ignored. Everything a handler touches is set before the signals can come
/// or is one word, and it calls only async-signal-safe functions.
enum SignalEnding {
    static let signals = [SIGINT, SIGTERM, SIGHUP]
    /// Seconds a requested rollback may take before the process ends anyway.
    static let rollbackSeconds: UInt32 = 10

    private enum Outcome { case none, underWay, committed, rolledBack }
    nonisolated(unsafe) private static var inTransaction = false
    /// What became of the last transaction that ended.
    nonisolated(unsafe) private static var lastTransaction = Outcome.none
    /// The signal the command is unwinding for; 0 if none came.
    nonisolated(unsafe) private(set) static var pendingSignal: Int32 = 0
    /// What became of the changes that signal came during (or after).
    nonisolated(unsafe) private static var signalled = Outcome.none
    /// Set once a run committed in chunks (`judge --resume`) has committed
    /// one: a rollback then undoes only the chunk under way.
    nonisolated(unsafe) static var chunkCommitted = false

    /// The handler's own copy of standard error, made at start: standard
    /// error itself may be pointed elsewhere for a while (SpatiaLite's
    /// MakeValid warnings go to /dev/null), and a signal's line must not.
    nonisolated(unsafe) private(set) static var errorFD: Int32 = 2

    /// Called once, at start, before any database is opened.
    static func install() {
        let copy = dup(2)
        if copy >= 0 { _ = fcntl(copy, F_SETFD, FD_CLOEXEC); errorFD = copy }
        Interruption.observer = Interruption.Observer(began: {
            inTransaction = true
            // A command ending for a signal that came after a commit does not begin another write
            // (it is rolled back at once; what was committed before stands, as the line will say).
            if pendingSignal != 0 { Interruption.request() }
            TestStops.reach(.began)
        }, committing: { commit in
            try holdingSignals { TestStops.reach(.committing); try commit() }
        }, ended: { committed in
            inTransaction = false
            lastTransaction = committed ? .committed : .rolledBack
            if signalled == .underWay { signalled = lastTransaction }
            if committed { TestStops.reach(.committed) }
        })
        for sig in signals {
            var old = sigaction()
            // SIG_IGN is the handler 1 (signal.h); the handler is one word, as a union.
            guard sigaction(sig, nil, &old) == 0, unsafeBitCast(old.__sigaction_handler, to: Int.self) != 1 else { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { SignalEnding.received($0) }
            sigemptyset(&action.sa_mask)
            sigaction(sig, &action, nil)
        }
        var alarmAction = sigaction()
        alarmAction.__sigaction_handler.sa_handler = { _ in SignalEnding.endAtOnce(SignalEnding.pendingSignal) }
        sigemptyset(&alarmAction.sa_mask)
        sigaction(SIGALRM, &alarmAction, nil)
        TestStops.read()
        TestStops.reach(.ready)
    }

    /// The first signal during a transaction lets the command roll it back;
    /// after a commit with no output to see to, finish (its reads are not
    /// interrupted: it prints what it committed); any other ends it now.
    private static func received(_ sig: Int32) {
        guard pendingSignal == 0, inTransaction || (lastTransaction == .committed && !TemporaryFiles.endsAtOnce) else {
            endAtOnce(sig)
        }
        signalled = inTransaction ? .underWay : .committed
        pendingSignal = sig
        if inTransaction { Interruption.request() }
        alarm(rollbackSeconds)
    }

    /// Once the command has unwound for `pendingSignal`: says what became
    /// of its changes, removes its output's temporary file, and ends the
    /// process by the signal.
    static func endBySignal() -> Never {
        alarm(0)
        fflush(stdout)  // what the command printed (a committed run's line) is not lost with the process
        say(pendingSignal, signalled == .committed ? "the changes had been committed, and stand"
                           : chunkCommitted ? "the chunk under way was rolled back; the chunks committed before it stand"
                           : "the transaction was rolled back, the database is as it was")
        _ = TemporaryFiles.actOnSignal()
        die(pendingSignal)
    }

    /// Ends the process by `sig` now, as the output requires, saying what
    /// became of the database. Async-signal-safe.
    private static func endAtOnce(_ sig: Int32) -> Never {
        if !TemporaryFiles.actOnSignal() {
            say(sig, inTransaction ? "ended at once, before the rollback: SQLite rolls the transaction back when the database is next opened"
                : lastTransaction == .committed ? "the changes had been committed, and stand" : "nothing was changed")
        }
        die(sig)
    }

    /// `FILE: ` of the catalog the command opened, made before any signal
    /// can need it: the handler may not allocate. Never freed.
    nonisolated(unsafe) private static var catalogPrefix: UnsafeBufferPointer<UInt8>?

    /// Names the catalog in what `say` writes.
    static func name(catalog path: String) {
        let bytes = Array((path + ": ").utf8)
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = copy.initialize(from: bytes)
        catalogPrefix = UnsafeBufferPointer(copy)
    }

    /// Writes `error: FILE: interrupted by SIGx: <what>`. Async-signal-safe.
    private static func say(_ sig: Int32, _ what: StaticString) {
        let name: StaticString = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal"
        let error: StaticString = "error: "
        write(errorFD, error.utf8Start, error.utf8CodeUnitCount)
        if let prefix = catalogPrefix, let base = prefix.baseAddress { write(errorFD, base, prefix.count) }
        for part: StaticString in ["interrupted by ", name, ": ", what, "\n"] {
            write(errorFD, part.utf8Start, part.utf8CodeUnitCount)
        }
    }

    private static func die(_ sig: Int32) -> Never {
        signal(sig, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, sig)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(sig)
        _exit(128 + sig)
    }

    /// Runs `body` with SIGINT, SIGTERM and SIGHUP held on this thread; one
    /// that came meanwhile is acted on as it returns.
    static func holdingSignals<T>(_ body: () throws -> T) rethrows -> T {
        var set = sigset_t(), old = sigset_t()
        sigemptyset(&set)
        for sig in signals { sigaddset(&set, sig) }
        pthread_sigmask(SIG_BLOCK, &set, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
        return try body()
    }
}
