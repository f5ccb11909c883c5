#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The temporary file an output is being written to, removed if the
/// process is ended by SIGINT, SIGTERM or SIGHUP (Ctrl-C, a service
/// stopped, a terminal closed) before it is renamed into place: the run
/// itself is rolled back by SQLite, so nothing of it should remain. (After
/// kill -9 nothing can run: the `.partial-*` file stays.) A signal the
/// process ignores (`nohup` ignores SIGHUP) stays ignored. One output at a
/// time, as every command writes at most one.
enum TemporaryFiles {
    nonisolated(unsafe) private static var path: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var previous: [(Int32, sigaction)] = []

    static func removeOnSignal(_ temp: String) {
        forget()
        path = strdup(temp)
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            var old = sigaction()
            // SIG_IGN is the handler 1 (signal.h); the handler is one word, as a union.
            guard sigaction(sig, nil, &old) == 0, unsafeBitCast(old.__sigaction_handler, to: Int.self) != 1 else { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in
                if let p = TemporaryFiles.path { unlink(p) }
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
        if let p = path { path = nil; free(p) }
    }
}
