import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The temporary file of a regular `--out FILE` (FILE.partial-XXXXXX) as a
/// resumable run keeps it (`judge --resume`, docs/operations.md): synced
/// and measured with each chunk's commit (`syncedLength`), left in place
/// when the run fails after one (`keepPartial`), and taken up again by the
/// resumed run, truncated to the length its last committed chunk recorded
/// (`reopen`), so the file is written once, not read back from the catalog.
extension OutputFile {
    /// `partial` opened again to append after its first `bytes`, or nil if
    /// it may not be: only a regular file (never through a link) named as
    /// `target`'s partial file, at least that long, which no other process
    /// holds (each holds its partial file under flock).
    static func reopen(_ partial: RecordedOutput, target: String) -> UnsafeMutablePointer<FILE>? {
        let name = partial.partial
        guard name.hasPrefix(target + ".partial-"), name.utf8.count == target.utf8.count + ".partial-XXXXXX".utf8.count else { return nil }
        let fd = open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, Int64(st.st_size) >= partial.bytes,
              flock(fd, LOCK_EX | LOCK_NB) == 0, ftruncate(fd, off_t(partial.bytes)) == 0, let f = fdopen(fd, "a") else {
            Glibc.close(fd)
            return nil
        }
        return f
    }

    /// The temporary file being written (nil for standard output, a FIFO, a device, a spool).
    var partialPath: String? {
        if case .replacing(let temp, _) = kind { return temp }
        return nil
    }

    /// Flushes and syncs what was written so far; returns its length.
    func syncedLength() throws -> Int64 {
        guard let file, fflush(file) == 0, fsync(fileno(file)) == 0 else { throw Self.error("cannot write", name) }
        return Int64(ftell(file))
    }

    /// From a committed chunk on, the partial file outlives a failure (and a signal), for the resumed run.
    func keepPartial() {
        guard !keepsPartial else { return }
        keepsPartial = true
        TemporaryFiles.forget()
    }
}
