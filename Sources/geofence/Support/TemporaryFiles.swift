#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The temporary file an output is being written to, removed if the
/// process is ended by SIGINT, SIGTERM or SIGHUP (Ctrl-C, a service
/// stopped, a terminal closed) before it is renamed into place: the run
/// itself is rolled back by SQLite, so nothing of it should remain. (After
/// kill -9 nothing can run: the `.partial-*` file stays.) One output at a
/// time, as every command writes at most one.
enum TemporaryFiles {
    nonisolated(unsafe) private static var path: UnsafeMutablePointer<CChar>?

    static func removeOnSignal(_ temp: String) {
        forget()
        path = strdup(temp)
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig) { sig in
                if let p = TemporaryFiles.path { unlink(p) }
                signal(sig, SIG_DFL)
                raise(sig)
            }
        }
    }

    static func forget() {
        guard let p = path else { return }
        path = nil
        free(p)
        for sig in [SIGINT, SIGTERM, SIGHUP] { signal(sig, SIG_DFL) }
    }
}
