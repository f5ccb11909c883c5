#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CSQLite
import GeofenceCore

/// The SQLite routines table for a host that calls the engine without going
/// through SQLite first (a Spark task calling `gf_task_open` through ctypes).
///
/// The SQL layer calls SQLite only through the table `sqlite` holds, which a
/// host's SQLite hands over when it loads the extension. When no host did,
/// the machine's libsqlite3 is opened by name and asked for its table the way
/// the CLI asks (an automatic extension called for one in-memory connection,
/// then cancelled, so that no other connection of the process is touched).
/// The library is found, never linked: the extension stays free of direct
/// sqlite3_* references (`-z defs`). Where a host loaded the extension
/// already, its table is used.
public enum HostSQLite {
    private static let lock = Lock()

    /// Makes sure `sqlite` holds a routines table; throws a `CatalogError`
    /// saying which library or symbol was missing when none can be had.
    public static func ensureRoutines() throws {
        try lock.with {
            if sqlite != nil { return }
            try borrowFromLibrary()
            guard sqlite != nil else {
                throw CatalogError("libsqlite3.so.0 gave no routines table (another SQLite library in this process loaded the engine first?)")
            }
        }
    }

    private typealias AutoExtension = @convention(c) (@convention(c) () -> Void) -> Int32
    private typealias OpenV2 = @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?, Int32,
                                               UnsafePointer<CChar>?) -> Int32
    private typealias Close = @convention(c) (OpaquePointer?) -> Int32

    /// Opens libsqlite3.so.0, registers `entry` as an automatic extension,
    /// opens and closes an in-memory database (which calls it with the table)
    /// and cancels the registration.
    private static func borrowFromLibrary() throws {
        guard let library = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_GLOBAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "not found"
            throw CatalogError("cannot open the machine's SQLite library libsqlite3.so.0 (\(why)): install libsqlite3-0")
        }
        func symbol<T>(_ name: String, _ type: T.Type) throws -> T {
            guard let p = dlsym(library, name) else { throw CatalogError("libsqlite3.so.0 has no \(name): SQLite too old (3.8.7 or later needed)") }
            return unsafeBitCast(p, to: type)
        }
        let register = try symbol("sqlite3_auto_extension", AutoExtension.self)
        let cancel = try symbol("sqlite3_cancel_auto_extension", AutoExtension.self)
        let open = try symbol("sqlite3_open_v2", OpenV2.self)
        let close = try symbol("sqlite3_close", Close.self)
        let entry: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                   UnsafePointer<sqlite3_api_routines>?) -> Int32 = { db, err, api in
            Registration.initialize(db, err, api)
        }
        let asVoid = unsafeBitCast(entry, to: (@convention(c) () -> Void).self)
        _ = register(asVoid)
        defer { _ = cancel(asVoid) }
        var db: OpaquePointer?
        _ = open(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nil)
        _ = close(db)
    }

    /// Opens `path` read-only (SQLITE_OPEN_READONLY: the file is never
    /// written, whatever runs on the connection) and checks that it is a
    /// catalog of the current schema. A file that is missing or not a
    /// SQLite database is refused naming it.
    public static func openReadOnly(_ path: String) throws -> Connection {
        try ensureRoutines()
        var handle: OpaquePointer?
        let rc = sqlite.pointee.open_v2!(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.flatMap { sqlite.pointee.errmsg!($0) }.map { String(cString: $0) } ?? "error \(rc)"
            if let handle { _ = sqlite.pointee.close_v2!(handle) }
            throw CatalogError("\(path): cannot open read-only: \(message)")
        }
        let db = Connection(owning: handle)
        do {
            // Mapped pages are the OS cache's, shared by every task of the machine reading the same file.
            try db.execute("PRAGMA mmap_size = 2147483648; PRAGMA cache_size = -65536")
            try Schema.requireCurrent(db, for: "judgement")
        } catch let e as SQLiteError {
            throw CatalogError("\(path): not a geofence catalog SQLite can read (SQLite: \(e.message))")
        }
        return db
    }
}
