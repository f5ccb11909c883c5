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

    /// Puts in place the `--out` file a resumable run left whole beside
    /// `path`: the run was killed after its last commit (its status 'done',
    /// the file's length recorded with that commit) and before the rename
    /// that ends every run. True when it did; false when there is no such
    /// file (another name, another length, held by a process).
    /// `footer`: what the format writes after the last event (GeoJSON's
    /// closing brackets), which the run may or may not have written after
    /// its commit: the file is its recorded length, or that and the footer.
    static func placeLeft(_ partial: RecordedOutput, footer: [UInt8], at path: String) -> Bool {
        guard let (target, descriptor) = followLinks(path), descriptor == nil else { return false }
        let name = partial.partial
        guard name.hasPrefix(target + ".partial-"), name.utf8.count == target.utf8.count + ".partial-XXXXXX".utf8.count else { return false }
        let fd = open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        let size = Int64(st.st_size), whole = partial.bytes + Int64(footer.count)
        if size == partial.bytes && !footer.isEmpty {
            guard footer.withUnsafeBytes({ pwrite(fd, $0.baseAddress, footer.count, off_t(size)) }) == footer.count else { return false }
        } else if size == whole && !footer.isEmpty {
            var tail = [UInt8](repeating: 0, count: footer.count)
            guard tail.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, footer.count, off_t(partial.bytes)) }) == footer.count,
                  tail == footer else { return false }
        } else if size != partial.bytes {
            return false
        }
        guard fsync(fd) == 0, rename(name, target) == 0 else { return false }
        let folder = target.lastIndex(of: "/").map { String(target[..<$0]) } ?? "."
        let dir = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 { _ = fsync(dir); Glibc.close(dir) }
        return true
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
