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
        try NearestTable.register(db)
        try RegionFunctions.register(db)
        try SessionTable.register(db)
    }
}
