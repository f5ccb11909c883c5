import CSQLite
import GeofenceSQL
import GeofenceCore

/// Opening databases in a process that links libsqlite3 itself.
///
/// The gf_ functions are registered through sqlite3_auto_extension, the same
/// entry the loadable extension uses, so every connection this process opens
/// runs exactly the extension's code. SpatiaLite is loaded by name.
public enum Database {
    private static let registered: Bool = {
        let entry: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, UnsafePointer<sqlite3_api_routines>?) -> Int32 = {
            Registration.initialize($0, $1, $2)
        }
        return sqlite3_auto_extension(unsafeBitCast(entry, to: (@convention(c) () -> Void).self)) == SQLITE_OK
    }()

    /// How long a connection waits for another writer before giving up.
    public static let busyTimeoutSeconds = 10

    public struct OpenError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Opens (or with `create`, creates) the database at `path`, with SpatiaLite
    /// loaded and a busy timeout, so a second writer waits instead of failing at once.
    public static func open(_ path: String, create: Bool = false, readOnly: Bool = false, spatiaLite: Bool = true) throws -> Connection {
        precondition(registered)
        var handle: OpaquePointer?
        // No mutex per call: this process's threads take turns with a
        // connection (judgement hands it over, `AreaPreparation`) and never
        // share one at once, and a lock around every column read would be a
        // share of every scan of a catalog paid for nothing.
        // SQLITE_OPEN_URI: a `file:…?mode=ro` name is a URI; any other name is a plain file name still.
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0))) | SQLITE_OPEN_NOMUTEX
            | SQLITE_OPEN_URI
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "error \(rc)"
            if let handle { sqlite3_close_v2(handle) }
            if !create && rc == SQLITE_CANTOPEN { throw OpenError(description: "\(path): no such database (create one with `geofence init \(Echo.shellWord(path))`)") }
            throw OpenError(description: "\(path): cannot open: \(message)")
        }
        sqlite3_busy_timeout(handle, Int32(busyTimeoutSeconds * 1000))
        let db = Connection(owning: handle)
        // Judgement and imports revisit the R*Tree and area rows constantly,
        // more than SQLite's default 2 MB cache holds: the file is mapped (its
        // pages are the OS cache's, shared, not copied into ours) and 64 MiB
        // of pages of our own are kept.
        do {
            try db.execute("PRAGMA mmap_size = 2147483648; PRAGMA cache_size = -65536")
        } catch let e as SQLiteError where e.code & 0xFF == SQLITE_NOTADB {
            // The first statement is where SQLite notices; say which file (arguments swapped?).
            throw OpenError(description: "\(path): not a SQLite database (SQLite: \(e.message)); "
                            + "every command takes the catalog database first, e.g. `geofence import DB FILE`")
        } catch let e as SQLiteError where e.isDiskFull {
            // The first statement is also where a WAL database makes its -shm
            // file, which a full disk refuses (SQLITE_IOERR_SHMSIZE, ENOSPC).
            throw OpenError(description: "\(path): cannot open: no space left on device: SQLite could not make the files it keeps "
                            + "beside the catalog (its -shm and -wal); free some space on that disk and try again "
                            + "(SQLite \(e.code))")
        }
        if spatiaLite {
            try loadSpatiaLite(db)
            // SpatiaLite's initialisation sets its own 5 s busy timeout: ours again, as the messages say.
            sqlite3_busy_timeout(handle, Int32(busyTimeoutSeconds * 1000))
        }
        return db
    }

    public static func loadSpatiaLite(_ db: Connection) throws {
        sqlite3_enable_load_extension(db.handle, 1)
        defer { sqlite3_enable_load_extension(db.handle, 0) }
        var err: UnsafeMutablePointer<CChar>?
        if sqlite3_load_extension(db.handle, "mod_spatialite", nil, &err) != SQLITE_OK {
            let message = err.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(err)
            throw OpenError(description: "cannot load SpatiaLite (mod_spatialite): \(message). Install libsqlite3-mod-spatialite.")
        }
    }
}
