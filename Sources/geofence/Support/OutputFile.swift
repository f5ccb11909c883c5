import ArgumentParser
import GeofenceCore
import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The file a command writes its output to (`--out`), or standard output.
/// Every command that writes an output file goes through here, so they all
/// keep the same rules:
///
/// - Never the database being read, nor its -wal, -shm or -journal file:
///   compared by device and inode, so another name of the same file (a hard
///   link, a symlink) is refused too, and by name for the ones not there yet.
///   Writing over them destroys the catalog.
/// - A regular file (or a new one) is written to a temporary file beside it,
///   synced and renamed over it only when complete: a failed command leaves
///   the old file, or none, never half of one.
/// - Anything else (a device such as /dev/null, a FIFO) is written directly:
///   renaming over it would replace the device node with a regular file.
/// - Every write, flush, sync and close is checked: an error fails the
///   command, and the temporary file is removed.
final class OutputFile {
    enum Kind { case standardOutput, direct, replacing(temp: String, target: String), spool }

    /// The name for messages.
    let name: String
    let kind: Kind
    var file: UnsafeMutablePointer<FILE>?
    private var done = false
    /// Set once a committed chunk of a resumable run counts on the
    /// temporary file (`keepPartial`): a failure then leaves it in place.
    var keepsPartial = false
    /// The partial file of a resumable run taken up again (`reusing`), if it was.
    private(set) var reused: RecordedOutput?

    /// Opens `path` (standard output when nil) for output from a command
    /// reading the database on `database`; with `reusing`, a resumable run's
    /// partial file for this same output is taken up again where it may be
    /// (`OutputFile.reopen`).
    init(_ path: String?, database: Connection, reusing: RecordedOutput? = nil) throws {
        let guarded = DatabaseFiles(database)
        guard let path else {
            name = "standard output"
            var st = stat()
            if fstat(1, &st) == 0, let which = guarded.match(st) {
                throw InputError("refusing to write over \(which)", file: name)
            }
            kind = .standardOutput
            file = stdout
            return
        }
        name = path
        if let which = guarded.match(path: path) {
            throw InputError("refusing to write over \(which): choose another output file", file: path)
        }
        // A symbolic link is followed, never replaced: the file it leads to
        // is (the link stays a link). A name of one of this process's own
        // file descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a
        // link through one) is written to that descriptor as it is: opened
        // anew, a file behind it would be written from its start, over what
        // was there (an append-mode log, say).
        guard let (target, descriptor) = Self.followLinks(path) else {
            throw InputError("is a symbolic link that cannot be followed (a loop, or more than 40 links)", file: path)
        }
        var st = stat()
        let exists = stat(target, &st) == 0
        if exists && (st.st_mode & S_IFMT) == S_IFDIR { throw InputError("is a directory, not a file", file: path) }
        if let descriptor {
            let fd = dup(descriptor)
            guard fd >= 0 else { throw Self.error("cannot write to file descriptor \(descriptor)", path) }
            kind = .direct
            file = fdopen(fd, "w")
        } else if exists && (st.st_mode & S_IFMT) != S_IFREG {
            let fd = open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC)
            guard fd >= 0 else { throw Self.error("cannot open", path) }
            kind = .direct
            file = fdopen(fd, "w")
        } else if let partial = reusing, let f = Self.reopen(partial, target: target) {
            kind = .replacing(temp: partial.partial, target: target)
            file = f
            reused = partial
            TemporaryFiles.removeOnSignal(partial.partial)
        } else {
            var template = Array((target + ".partial-XXXXXX").utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else { throw outputFolderError(target: target, path: path) }
            let temp = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            // mkstemp makes the file private; give it the owner (where this
            // process may) and mode the file it replaces had, or the mode of
            // a newly created file.
            let mode: mode_t
            if exists {
                _ = fchown(fd, st.st_uid, st.st_gid)
                mode = st.st_mode & 0o7777
            } else {
                let mask = umask(0); umask(mask); mode = 0o666 & ~mask
            }
            fchmod(fd, mode)
            _ = flock(fd, LOCK_EX | LOCK_NB)  // a resumable run's partial file is taken up only by one process
            kind = .replacing(temp: temp, target: target)
            file = fdopen(fd, "w")
            TemporaryFiles.removeOnSignal(temp)
        }
        if file == nil { throw Self.error("cannot open", path) }
    }

    /// Where `path` leads through symbolic links (itself if it is none),
    /// and the descriptor of this process it names, if it or a link on the
    /// way is one (/dev/stdout, /dev/fd/N, /proc/self/fd/N); nil for a
    /// loop. A link to a file not made yet leads to where it would be.
    static func followLinks(_ path: String) -> (String, descriptor: Int32?)? {
        func descriptor(_ p: String) -> Int32? {
            switch p {
            case "/dev/stdin": return 0
            case "/dev/stdout": return 1
            case "/dev/stderr": return 2
            default: break
            }
            for prefix in ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/proc/\(getpid())/fd/"] where p.hasPrefix(prefix) {
                return Int32(p.dropFirst(prefix.count))
            }
            return nil
        }
        var p = path
        for _ in 0..<40 {
            if let d = descriptor(p) { return (p, d) }
            var st = stat()
            guard lstat(p, &st) == 0, (st.st_mode & S_IFMT) == S_IFLNK else { return (p, nil) }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(p, &buffer, buffer.count - 1)
            guard n > 0 else { return nil }
            let link = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if link.hasPrefix("/") {
                p = link
            } else {
                let dir = p.lastIndex(of: "/").map { String(p[...$0]) } ?? ""
                p = dir + link
            }
        }
        return nil
    }

    private init(spoolNamed name: String, _ file: UnsafeMutablePointer<FILE>) {
        self.name = name
        kind = .spool
        self.file = file
    }

    /// A temporary file in $TMPDIR (or /tmp), its name removed at once so
    /// that it is gone when closed: output made before it can go where it
    /// is meant to (`copy(to:)`).
    static func spool() throws -> OutputFile {
        let dir = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((dir + "/geofence-spool-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw error("cannot create a temporary file", dir) }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        guard let f = fdopen(fd, "w+") else { Glibc.close(fd); throw error("cannot open a temporary file", dir) }
        return OutputFile(spoolNamed: "a temporary file in \(dir)", f)
    }

    /// Writes everything written to this spool so far to `other`.
    func copy(to other: OutputFile) throws {
        guard case .spool = kind, let file, fflush(file) == 0, fseek(file, 0, SEEK_SET) == 0 else {
            throw Self.error("cannot read back", name)
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if n > 0 { try other.write(bytes: Array(chunk[..<n])) }
            if n < chunk.count { break }
        }
        guard ferror(file) == 0 else { throw Self.error("cannot read back", name) }
    }

    deinit { discard() }

    func write(_ s: String) throws {
        guard let file, fputs(s, file) != EOF else { throw Self.error("cannot write", name) }
    }

    /// Bytes as they are (text already encoded, as a large output builds it).
    func write(bytes: [UInt8]) throws {
        guard let file, bytes.withUnsafeBytes({ fwrite($0.baseAddress, 1, $0.count, file) }) == bytes.count else {
            throw Self.error("cannot write", name)
        }
    }

    /// Whether the output can be started over (`rewind`): a temporary file,
    /// not standard output, a FIFO or a device.
    var canRewind: Bool {
        switch kind {
        case .replacing, .spool: return true
        case .standardOutput, .direct: return false
        }
    }

    /// Empties the temporary file and starts it over (`canRewind`).
    func rewind() throws {
        guard canRewind, let file, fflush(file) == 0, ftruncate(fileno(file), 0) == 0, fseek(file, 0, SEEK_SET) == 0 else {
            throw Self.error("cannot start the output over", name)
        }
    }

    /// Writes out everything written so far and closes the file (syncing a
    /// file that will be renamed). Call `commit` afterwards to put it in place.
    func close() throws {
        guard let f = file else { return }
        file = nil
        var failure: InputError?
        if fflush(f) != 0 || ferror(f) != 0 {
            failure = Self.error("cannot write", name)
        } else if case .replacing = kind, fsync(fileno(f)) != 0 {
            failure = Self.error("cannot write", name)
        }
        if f != stdout, fclose(f) != 0, failure == nil { failure = Self.error("cannot write", name) }
        if let failure { throw failure }
    }

    /// From the commit of the run it holds: a signal puts a complete file in
    /// place, or says that a stream was cut short and how to `list` the run.
    func committed(run: Int64, list: String) {
        let placed = "interrupted after run \(run) was committed; its notifications are in \(name)"
        if case .replacing(let temp, let target) = kind {
            TemporaryFiles.afterCommit(renaming: temp, to: target, note: placed, placedNote: placed)
        } else {
            TemporaryFiles.afterCommit(renaming: nil, to: nil, note: "error: interrupted after run \(run) was committed: \(name) did not get all "
                                       + "its notifications; \(list) lists them", placedNote: placed)
        }
    }

    /// Closes the file if still open and renames a temporary file over the target.
    func commit() throws {
        try close()
        guard case .replacing(let temp, let target) = kind, !done else { done = true; return TemporaryFiles.placed() }
        done = true
        defer { TemporaryFiles.placed() }
        guard rename(temp, target) == 0 else {
            let failure = Self.error("cannot put the output in place (renaming \(temp) over it)", name)
            unlink(temp)
            throw failure
        }
    }

    /// Abandons the output: closes the file and removes a temporary one.
    func discard() {
        if let f = file, f != stdout { fclose(f) }
        file = nil
        if !done, !keepsPartial, case .replacing(let temp, _) = kind { unlink(temp); TemporaryFiles.forget() }
        done = true
    }

    static func error(_ what: String, _ path: String) -> InputError {
        InputError("\(what): \(String(cString: strerror(errno)))", file: path)
    }
}
