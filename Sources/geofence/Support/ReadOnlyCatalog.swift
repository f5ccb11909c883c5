import GeofenceCore
import GeofenceHost
import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A catalog this process cannot write: a file the user may only read, in a
/// folder the user cannot write (where SQLite cannot create the -journal, -wal
/// or -shm file), or a `file:…?mode=ro` URI. Every command that only reads
/// (listings, export, locate, nearest, regions, …) works on it; a command
/// that writes fails at its first write with a message saying why, and
/// nothing is changed.
enum ReadOnlyCatalog {
    /// Why the catalog of this command was opened read-only, if it was.
    nonisolated(unsafe) static var opened: (path: String, reason: String)?

    /// Why `path` must be opened read-only, or nil when it can be written.
    static func reason(_ path: String) -> String? {
        if path.hasPrefix("file:") {
            let query = path.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            let params = query.split(separator: "&")
            if params.contains("mode=ro") { return "it was named with mode=ro" }
            if params.contains("immutable=1") { return "it was named with immutable=1" }
            return nil
        }
        if access(path, F_OK) != 0 { return nil }        // missing: the open names it
        if access(path, W_OK) != 0 { return "the file is not writable by this user" }
        // SQLite follows a symbolic link and writes its journal files beside
        // the file it leads to, so that folder is the one that must be writable.
        let target = resolved(path)
        let folder = folder(of: target)
        if access(folder, W_OK | X_OK) != 0 {
            let via = target == path ? "" : " (where the symbolic link \(path) leads)"
            return "its folder \(folder)\(via) is not writable by this user (SQLite writes its journal files beside the database)"
        }
        return nil
    }

    /// The file a symbolic link `path` leads to (every link on the way
    /// followed, as SQLite opens it); `path` itself when it is no link (a
    /// linked folder on the way needs nothing: access() follows it).
    static func resolved(_ path: String) -> String {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFLNK, let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// The folder a file name is in, where SQLite puts its side files.
    static func folder(of path: String) -> String {
        let slash = path.lastIndex(of: "/")
        return slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    }

    /// Opens the catalog read-only and checks its schema without upgrading.
    ///
    /// A WAL catalog in a folder nobody may write has no -shm file, and SQLite
    /// cannot read it even read-only without one unless told the file cannot
    /// change (`immutable=1`): that second try is made only then.
    /// With `immutable`, the file is read as one nobody writes (see `openShared`).
    static func open(_ path: String, reason: String, immutable: Bool = false) throws -> Connection {
        opened = (path, reason)
        // Named as the user named it: the URI below is this function's own.
        if !path.hasPrefix("file:"), access(path, F_OK) != 0 {
            throw CatalogError(file: path, "no such database (create one with `geofence init \(Echo.shellWord(path))`)")
        }
        var uri = path.hasPrefix("file:") ? path : "file:" + escaped(path) + "?mode=ro"
        if immutable { uri += (uri.contains("?") ? "&" : "?") + "immutable=1" }
        var db: Connection
        do {
            let first = try Database.open(uri, readOnly: true)
            _ = try first.scalar("SELECT count(*) FROM sqlite_master")
            db = first
        } catch let e as SQLiteError where [8, 14].contains(e.code & 0xFF) {   // SQLITE_READONLY, SQLITE_CANTOPEN
            // immutable=1 reads the main file alone: committed changes still in
            // the -wal would silently not be seen. Then refuse instead.
            // Its side files are beside the file a symbolic link leads to.
            let file = path.hasPrefix("file:") ? nil : resolved(path)
            // A hot journal (a writer stopped mid-transaction): the file may hold
            // its uncommitted pages until SQLite rolls them back, which needs write
            // access; read as immutable it would show them, or seem malformed.
            var st = stat()
            if e.code == 776 || (file.map { stat($0 + "-journal", &st) == 0 && st.st_size > 0 } ?? false) && e.code & 0xFF == 8 {   // SQLITE_READONLY_ROLLBACK
                throw CatalogError(file: path, "a writer stopped in the middle of a transaction and left its -journal file; SQLite must roll "
                                   + "the catalog back before it can be read, and cannot here (\(reason)): ask its owner to open it once "
                                   + "(`sqlite3 \(Echo.shellWord(plainPath(path))) 'PRAGMA quick_check'` rolls it back), or copy the catalog with its -journal "
                                   + "to a folder you can write")
            }
            if let file, stat(file + "-wal", &st) == 0, st.st_size > 0 {
                throw CatalogError(file: path, "the catalog has committed changes in its -wal file that SQLite cannot read here "
                                   + "(\(reason), so no -shm file can be made beside it): ask its owner to checkpoint it "
                                   + "(`sqlite3 \(Echo.shellWord(plainPath(path))) 'PRAGMA wal_checkpoint(TRUNCATE)'`), or copy the catalog "
                                   + "with its -wal to a folder you can write")
            }
            db = try Database.open(uri + (uri.contains("?") ? "&" : "?") + "immutable=1", readOnly: true)
        }
        switch try Schema.state(of: db) {
        case .older(let v):
            throw CatalogError(file: path, "the catalog has schema version \(v), and this geofence needs version \(Schema.currentVersion); "
                               + "it cannot be upgraded here (\(reason)): upgrade it in place once as a user who can write it and its folder, "
                               + "e.g. `geofence settings \(Echo.shellWord(plainPath(path)))`")
        default:
            try Schema.open(db)    // current: nothing to do; absent or newer: its error
        }
        return db
    }

    /// Opens the catalog only to read it, whoever may write it (`judge
    /// --state`): SQLITE_OPEN_READONLY, so nothing of this process writes
    /// it, and no file is left beside it that was not there. SQLite makes a
    /// -wal and a -shm file beside a WAL catalog for every connection, a
    /// reader's too, and only a writer's last close removes them. A WAL
    /// catalog without a -wal file is one no connection has open, whose
    /// every committed change is in the file itself: it is read as
    /// immutable (no lock, no side file), which holds as long as nobody
    /// writes it meanwhile; judgement reads it whole as it opens it (every
    /// area prepared) and not again. Any other catalog (a -wal there, one in
    /// rollback mode) is opened as `open` opens it, with the side files
    /// that are there.
    static func openShared(_ path: String, reason: String) throws -> Connection {
        naming(catalog: path)
        let file = path.hasPrefix("file:") ? nil : resolved(path)
        let alone = file.map { isWAL($0) && access($0 + "-wal", F_OK) != 0 } ?? false
        do {
            return try open(path, reason: reason, immutable: alone)
        } catch let e as CatalogError {
            throw e.about(file: path)
        }
    }

    /// Whether the database file at `path` is in WAL mode (its header's
    /// write version, byte 18, is 2); false if it cannot be read.
    private static func isWAL(_ path: String) -> Bool {
        guard let f = fopen(path, "rb") else { return false }
        defer { fclose(f) }
        var header = [UInt8](repeating: 0, count: 20)
        return fread(&header, 1, 20, f) == 20 && header[18] == 2
    }

    /// The message for a write refused by SQLite on a read-only catalog.
    static func writeRefused(_ e: SQLiteError) -> String? {
        guard e.code & 0xFF == 8 else { return nil }   // SQLITE_READONLY
        let (path, reason) = opened ?? (openedCatalog ?? "the catalog", "SQLite could open it only for reading")
        return "\(path): this command writes to the catalog, which is read-only here (\(reason)); nothing was changed"
    }

    private static func plainPath(_ path: String) -> String {
        guard path.hasPrefix("file:") else { return path }
        return String(path.dropFirst(5).split(separator: "?", maxSplits: 1).first ?? "")
    }

    /// `%`, `?` and `#` would end or change a URI's path.
    private static func escaped(_ path: String) -> String {
        var out = ""
        for c in path {
            switch c {
            case "%": out += "%25"
            case "?": out += "%3F"
            case "#": out += "%23"
            default: out.append(c)
            }
        }
        // "file://x" would make x a host name.
        return out.hasPrefix("//") ? "/" + String(out.drop(while: { $0 == "/" })) : out
    }
}
