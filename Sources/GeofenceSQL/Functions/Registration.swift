import CSQLite
import GeofenceCore

/// The one place that puts every gf_ function into a connection: used by the
/// extension's entry point and, through sqlite3_auto_extension, by the CLI and
/// the tests, so every host runs the same code.
public enum Registration {
    /// The body of sqlite3_geofence_init.
    public static func initialize(_ db: OpaquePointer?, _ errorOut: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                  _ api: UnsafePointer<sqlite3_api_routines>?) -> Int32 {
        guard let db, let api else { return SQLITE_ERROR }
        if sqlite == nil { sqlite = api }
        // The engine calls SQLite through one routines table for the life of
        // the process. A second SQLite library in the same process (Python's
        // sqlite3 module and apsw, each with its own) would have its
        // connections driven through the first library's routines: a crash.
        // So the second is refused, with an error in its own memory.
        guard sqlite == api else {
            let message = "libgeofence is already loaded by another SQLite library in this process (for example Python's "
                + "sqlite3 module and apsw, which carries its own SQLite): use the engine from one of them per process"
            let n = message.utf8.count + 1
            if let m = api.pointee.malloc64?(UInt64(n)) {
                message.withCString { m.copyMemory(from: $0, byteCount: n) }
                errorOut?.pointee = m.assumingMemoryBound(to: CChar.self)
            }
            return SQLITE_ERROR
        }
        do {
            try register(Connection(borrowing: db))
            return SQLITE_OK
        } catch {
            // The message must live in SQLite's own memory: the host frees it with sqlite3_free.
            errorOut?.pointee = sqliteOwnedString("\(error)")
            return SQLITE_ERROR
        }
    }

    public static func register(_ db: Connection) throws {
        try db.createFunction("gf_version", arities: [0], argumentNames: [], flags: FunctionFlags.pure) { _ in
            .text(GeofenceVersion.string)
        }
        try GeometryFunctions.register(db)
        try CatalogFunctions.register(db)
        try JudgementFunctions.register(db)
        try StateFunctions.register(db)
        try PruneFunction.register(db)
        try NearestTable.register(db)
        try RegionFunctions.register(db)
        try SessionTable.register(db)
    }
}
