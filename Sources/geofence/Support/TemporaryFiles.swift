#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import GeofenceSQL

/// What becomes of a write transaction and an output when the process is
/// ended by SIGINT, SIGTERM or SIGHUP (Ctrl-C, a service stopped, a terminal
/// closed).
///
/// - During a write transaction (`Interruption.observer`) the signal asks for
///   the transaction to be rolled back: its next statement fails, the
///   rollback runs, and then (`endBySignal`) the output's temporary file
///   is removed, a line says so, and the process ends by the signal. So no
///   hot journal or unused WAL is left behind, and a reader without write
///   access is not locked out by one. A second signal, or no rollback within
///   `rollbackSeconds`, ends the process at once; SQLite then rolls the
///   transaction back when the database is next opened.
/// - Otherwise, before a run is committed, the output's temporary file is
///   removed and the process ends.
/// - Across the COMMIT those signals are held (`holdingSignals`): ended
///   during it, the process could not tell whether its run was committed.
/// - After the commit (`afterCommit`), a file's complete temporary file is
///   renamed into place, and a stream that was cut short gets a message
///   naming the committed run and how to list it: the run stands, and a
///   retry would find every fix stale, so its events must not be lost.
///
/// (After kill -9 nothing can run: a `.partial-*` file stays.) A signal the
/// process ignores (`nohup` ignores SIGHUP) stays ignored. One output at a
/// time, as every command writes at most one.
enum TemporaryFiles {
    nonisolated(unsafe) private static var path: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var renameTo: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var message: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var previous: [(Int32, sigaction)] = []
    private static let signals = [SIGINT, SIGTERM, SIGHUP]

    static func removeOnSignal(_ temp: String) {
        forget()
        path = strdup(temp)
        install()
    }

    /// From the commit on: `temp` (if any) is renamed to `target` on a
    /// signal, and `note` (one line) goes to standard error; once the output
    /// is complete (`placed`), `placedNote` instead.
    static func afterCommit(renaming temp: String?, to target: String?, note: String, placedNote: String) {
        forget()
        path = temp.map { strdup($0) }
        renameTo = target.map { strdup($0) }
        message = strdup(note + "\n")
        laterMessage = strdup(placedNote + "\n")
        install()
    }
    nonisolated(unsafe) private static var laterMessage: UnsafeMutablePointer<CChar>?

    /// The output is in place: a signal from here only says so (the note).
    static func placed() {
        holdingSignals {
            guard let later = laterMessage else { return forget() }
            for p in [path, renameTo, message] { if let p { free(p) } }
            (path, renameTo, message, laterMessage) = (nil, nil, later, nil)
        }
    }

    /// Runs `body` with SIGINT, SIGTERM and SIGHUP held; one that came
    /// meanwhile is acted on, by the handlers then in place, as it returns.
    static func holdingSignals<T>(_ body: () throws -> T) rethrows -> T {
        var set = sigset_t(), old = sigset_t()
        sigemptyset(&set)
        for sig in signals { sigaddset(&set, sig) }
        pthread_sigmask(SIG_BLOCK, &set, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
        return try body()
    }

    /// Seconds a requested rollback may take before the process ends anyway.
    static let rollbackSeconds: UInt32 = 10
    nonisolated(unsafe) private static var inTransaction = false
    /// The signal that asked for the rollback; 0 if none came.
    nonisolated(unsafe) private(set) static var pendingSignal: Int32 = 0
    /// Whether the transaction that signal came during was committed all the same.
    nonisolated(unsafe) private static var signalledCommitted = false

    /// Makes signals during write transactions roll them back; called once, at start.
    static func rollBackOnSignal() {
        Interruption.observer = (began: {
            inTransaction = true
            install()
        }, ended: { committed in
            // A signal that came during a COMMIT not held (all but judge's) is acted on when the command returns (`endBySignal`).
            inTransaction = false
            if pendingSignal != 0 { signalledCommitted = committed }
        })
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in TemporaryFiles.end(TemporaryFiles.pendingSignal) }
        sigemptyset(&action.sa_mask)
        sigaction(SIGALRM, &action, nil)
    }

    /// Once a transaction a signal came during has ended: removes the
    /// output's temporary file, says whether the changes were rolled back
    /// (the signal came in time) or committed (it came during the COMMIT),
    /// and ends the process by that signal.
    static func endBySignal() -> Never {
        alarm(0)
        let name = [SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP"][pendingSignal] ?? "signal \(pendingSignal)"
        fputs("error: interrupted by \(name): " + (signalledCommitted ? "it came as the changes were being committed; they stand\n"
                                                             : "the transaction was rolled back, the database is as it was\n"), stderr)
        end(pendingSignal)
    }

    /// Ends the process by `sig` at once, as the output's state requires. Async-signal-safe.
    private static func end(_ sig: Int32) -> Never {
        if let p = path {
            if let t = renameTo { rename(p, t) } else { unlink(p) }
        }
        if let m = message { write(2, m, strlen(m)) }
        signal(sig, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, sig)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(sig)
        _exit(128 + sig)
    }

    private static func install() {
        guard previous.isEmpty else { return }
        for sig in signals {
            var old = sigaction()
            // SIG_IGN is the handler 1 (signal.h); the handler is one word, as a union.
            guard sigaction(sig, nil, &old) == 0, unsafeBitCast(old.__sigaction_handler, to: Int.self) != 1 else { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in
                // The first signal during a write transaction asks for its rollback; any other ends the process now.
                guard TemporaryFiles.inTransaction, TemporaryFiles.pendingSignal == 0 else { TemporaryFiles.end(sig) }
                TemporaryFiles.pendingSignal = sig
                Interruption.request()
                alarm(TemporaryFiles.rollbackSeconds)
            }
            sigemptyset(&action.sa_mask)
            if sigaction(sig, &action, nil) == 0 { previous.append((sig, old)) }
        }
    }

    static func forget() {
        for (sig, old) in previous {
            var old = old
            sigaction(sig, &old, nil)
        }
        previous = []
        for p in [path, renameTo, message, laterMessage] { if let p { free(p) } }
        (path, renameTo, message, laterMessage) = (nil, nil, nil, nil)
        if inTransaction { install() }
    }
}
