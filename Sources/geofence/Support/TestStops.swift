#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Named moments at which the process stops itself, for tests that must send
/// a signal (or SIGKILL) at an exact point of a command's life instead of
/// after a guessed delay:
///
///     GEOFENCE_TEST_STOP_AT=began geofence settings fences.db k v &
///     # wait until it is stopped (waitpid with WUNTRACED), then
///     kill -TERM $pid; kill -CONT $pid   # the SIGTERM lands exactly there
///
/// The points, in the order a writing command reaches them:
/// - `ready`: the signal handlers are installed; no database is open yet.
/// - `began`: a write transaction has begun (BEGIN IMMEDIATE succeeded).
/// - `chunk`: judge has judged and written a chunk of its fixes (the last
///   one too: the run is not yet committed); state import has written a
///   chunk of its records (10,000, and the last ones); prune has deleted a
///   chunk of rows, not yet committed (each chunk is a transaction: prune
///   reaches `began`, `committing` and `committed` once per chunk).
/// - `chunk-committed`: `judge --resume` has committed a chunk (the last
///   one too) and begun the transaction of the next; a SIGKILL here leaves
///   the run to be resumed after that chunk.
/// - `committing`: the COMMIT is about to run, with the signals held (a
///   signal sent now is acted on once the COMMIT is over).
/// - `committed`: the COMMIT has succeeded, the signals still held; the
///   command has not yet printed or put its output in place. (`judge
///   --resume` reaches `began`, `committing` and `committed` at each chunk's
///   commit too.)
///
/// The variable holds a comma-separated list of points; each listed point
/// stops the process every time it is reached (`raise(SIGSTOP)`), and it goes
/// on when it gets SIGCONT. Unset (always, outside the tests) it costs one
/// check of a flag read once at start. docs/testing.md lists it.
enum TestStops {
    enum Point: String, CaseIterable {
        case ready, began, chunk, chunkCommitted = "chunk-committed", committing, committed
    }

    nonisolated(unsafe) private static var chosen: Set<Point> = []

    /// Reads GEOFENCE_TEST_STOP_AT once, at start. An unknown name is an
    /// error, so that a test naming a point that does not exist fails instead
    /// of waiting for a stop that never comes.
    static func read() {
        guard let raw = getenv("GEOFENCE_TEST_STOP_AT").map({ String(cString: $0) }), !raw.isEmpty else { return }
        for name in raw.split(separator: ",") {
            guard let point = Point(rawValue: String(name)) else {
                fail("error: GEOFENCE_TEST_STOP_AT: no stop point '\(name)' (points: \(Point.allCases.map(\.rawValue).joined(separator: ", ")))", code: 1)
            }
            chosen.insert(point)
        }
    }

    /// Stops the process here if `point` was chosen, saying so on standard
    /// error (a variable left set by mistake must not stop a job silently).
    /// `ready` counts once per command: a command that starts itself again
    /// (`HugePages`) does not stop there a second time.
    static func reach(_ point: Point) {
        guard !chosen.isEmpty && chosen.contains(point) else { return }
        if point == .ready {
            if getenv("GEOFENCE_TEST_STOPPED_READY") != nil { return }
            setenv("GEOFENCE_TEST_STOPPED_READY", "1", 1)
        }
        fputs("geofence: stopped at '\(point.rawValue)' (GEOFENCE_TEST_STOP_AT is set): kill -CONT \(getpid()) goes on\n", stderr)
        raise(SIGSTOP)
    }
}
