#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import GeofenceSQL

/// The files of an open database that no output may overwrite: the database
/// and the -wal, -shm and -journal files SQLite keeps beside it.
struct DatabaseFiles {
    static let companions = [("", "the database being read"), ("-wal", "the -wal file of the database being read"),
                             ("-shm", "the -shm file of the database being read"),
                             ("-journal", "the -journal file of the database being read")]
    var paths: [(String, String)] = []
    var identities: [(dev_t, ino_t, String)] = []

    init(_ db: Connection) {
        guard let main = db.fileName else { return }
        let real = canonicalPath(main) ?? main
        for (suffix, what) in Self.companions {
            for p in Set([main + suffix, real + suffix]) {
                paths.append((p, what))
                var st = stat()
                if stat(p, &st) == 0 { identities.append((st.st_dev, st.st_ino, what)) }
            }
        }
    }

    func match(_ st: stat) -> String? {
        identities.first { $0.0 == st.st_dev && $0.1 == st.st_ino }?.2
    }

    /// Which of the files `path` names: the same file if it exists, or the same
    /// name (through symlinked directories too) if it does not exist yet.
    func match(path: String) -> String? {
        var st = stat()
        let exists = stat(path, &st) == 0
        if exists, let which = match(st) { return which }
        // X-wal where X is the database under another name (a hard link): the
        // -wal of X is the live journal of whoever writes through the name X.
        for (suffix, what) in Self.companions where !suffix.isEmpty && path.hasSuffix(suffix) {
            var base = stat()
            if stat(String(path.dropLast(suffix.count)), &base) == 0, match(base) == Self.companions[0].1 { return what }
        }
        guard !exists, let candidate = canonicalPath(path) else { return nil }
        return paths.first { $0.0 == candidate }?.1
    }
}

/// `path` with its directory resolved (symlinks, `..`), whether or not the
/// last component exists; nil if the directory does not.
func canonicalPath(_ path: String) -> String? {
    if let full = realpath(path, nil) { defer { free(full) }; return String(cString: full) }
    let slash = path.lastIndex(of: "/")
    let dir = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
    guard let full = realpath(dir, nil) else { return nil }
    defer { free(full) }
    let d = String(cString: full)
    return (d == "/" ? "" : d) + "/" + base
}
