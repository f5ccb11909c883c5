#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Standard error pointed at /dev/null while a library call runs that prints
/// there on its own, with no switch to stop it.
///
/// Why: SpatiaLite's MakeValid (RTTOPO, which asks GEOS whether the polygon
/// is valid before mending it) prints "RTTOPO warning: Self-intersection at
/// or near point …" to standard error for every polygon it repairs, and
/// SpatiaLite as a loadable extension offers no way to silence it. The
/// command already says, in its own words and with the feature's number and
/// id, what was repaired and why (GEOS's reason, from ST_IsValidReason), so
/// the library's line is only noise on the user's terminal.
///
/// Only the command-line tool repairs polygons (import and `areas add` with
/// --make-valid), so only its own standard error is ever redirected, never a
/// host application's. Anything another thread of the tool writes there
/// during the call is lost with it: the repairing thread is the one that
/// reports progress and errors, so nothing of the tool's is.
enum SilencedStandardError {
    /// Runs `body` with file descriptor 2 on /dev/null, restoring it after,
    /// whether `body` returns or throws. If /dev/null cannot be opened, or fd
    /// 2 not saved, `body` runs with standard error as it is.
    static func run<T>(_ body: () throws -> T) rethrows -> T {
        fflush(stderr)
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        let saved = null < 0 ? -1 : fcntl(2, F_DUPFD_CLOEXEC, 3)
        guard null >= 0, saved >= 0, dup2(null, 2) == 2 else {
            if null >= 0 { close(null) }
            if saved >= 0 { close(saved) }
            return try body()
        }
        close(null)
        defer {
            fflush(stderr)
            dup2(saved, 2)
            close(saved)
        }
        return try body()
    }
}
