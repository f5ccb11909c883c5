#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// What becomes of an output when the process is ended by SIGINT, SIGTERM
/// or SIGHUP (Ctrl-C, a service stopped, a terminal closed).
///
/// - Before its run is committed, the temporary file it is written to is
///   removed: SQLite rolls the run back, so nothing of it should remain.
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

    private static func install() {
        guard previous.isEmpty else { return }
        for sig in signals {
            var old = sigaction()
            // SIG_IGN is the handler 1 (signal.h); the handler is one word, as a union.
            guard sigaction(sig, nil, &old) == 0, unsafeBitCast(old.__sigaction_handler, to: Int.self) != 1 else { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in
                if let p = TemporaryFiles.path {
                    if let t = TemporaryFiles.renameTo { rename(p, t) } else { unlink(p) }
                }
                if let m = TemporaryFiles.message { write(2, m, strlen(m)) }
                signal(sig, SIG_DFL)
                raise(sig)
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
    }
}
