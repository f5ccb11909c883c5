#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// What becomes of a command's output when a signal ends the process
/// (`SignalEnding` decides when that is).
///
/// - Before its run is committed, the temporary file it is written to is
///   removed: the run is rolled back, so nothing of it should remain.
/// - After the commit (`afterCommit`), a file's complete temporary file is
///   renamed into place, and a stream that was cut short gets a message
///   naming the committed run and how to list it: the run stands, and a
///   retry would find every fix stale, so its events must not be lost.
///
/// (After kill -9 nothing can run: a `.partial-*` file stays.) One output at
/// a time, as every command writes at most one.
enum TemporaryFiles {
    nonisolated(unsafe) private static var path: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var renameTo: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var message: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var laterMessage: UnsafeMutablePointer<CChar>?

    static func removeOnSignal(_ temp: String) {
        forget()
        path = strdup(temp)
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
    }

    /// The output is in place: a signal from here only says so (the note).
    static func placed() {
        SignalEnding.holdingSignals {
            guard let later = laterMessage else { return forget() }
            for p in [path, renameTo, message] { if let p { free(p) } }
            (path, renameTo, message, laterMessage) = (nil, nil, later, nil)
        }
    }

    static func forget() {
        for p in [path, renameTo, message, laterMessage] { if let p { free(p) } }
        (path, renameTo, message, laterMessage) = (nil, nil, nil, nil)
    }

    /// Whether a signal must end the process at once for this output's sake
    /// (a committed run's output to put in place or account for).
    static var endsAtOnce: Bool { message != nil }

    /// Removes or renames the temporary file and writes the output's
    /// message; false if it has none. Async-signal-safe.
    static func actOnSignal() -> Bool {
        if let p = path {
            if let t = renameTo { rename(p, t) } else { unlink(p) }
        }
        guard let m = message else { return false }
        write(SignalEnding.errorFD, m, strlen(m))
        return true
    }
}
