import GeofenceCore

/// The catalog's schema: creation, version check, in-place upgrades.
///
/// `gf_meta.schema_version` says which sql/NNN_*.sql files a database has had.
/// Opening checks it: an older database is upgraded in one transaction, a
/// newer one is refused with a message, never touched. `gf_meta` also names
/// the package that wrote the catalog's schema (`created_by` at init,
/// `upgraded_by` at each upgrade), so a build refusing a newer catalog can
/// name the version to use instead (docs/versions.md is the policy).
public enum Schema {
    public static var currentVersion: Int { EmbeddedSQL.migrations.last!.0 }

    public enum State: Equatable { case absent, current, older(Int), newer(Int) }

    /// The catalog's version on this connection: that of main's catalog, or
    /// of the catalog main's state database judges with (`StateDatabase`).
    public static func state(of db: Connection) throws -> State {
        let schema = try StateDatabase.catalogSchema(db)
        let exists = try db.scalar("SELECT count(*) FROM \(schema).sqlite_master WHERE type = 'table' AND name = 'gf_meta'")
        guard exists.int64 == 1 else { return .absent }
        guard let v = try db.scalar("SELECT value FROM \(schema).gf_meta WHERE key = 'schema_version'").string.flatMap({ Int($0) }) else {
            throw CatalogError("gf_meta has no schema_version: not a geofence database, or a damaged one")
        }
        if v == currentVersion { return .current }
        return v < currentVersion ? .older(v) : .newer(v)
    }

    /// The catalog's tables this database lacks (all of them when it holds
    /// no catalog): how a plain SQLITE_ERROR is told to be a missing catalog,
    /// by the schema, not by the error's text.
    public static func missingTables(_ db: Connection) throws -> [String] {
        let tables = ["gf_meta", "gf_settings", "gf_areas", "gf_conditions", "gf_subjects", "gf_stays", "gf_last_notified",
                      "gf_runs", "gf_notifications", "gf_explain"]
        let present = Set(try db.query("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").compactMap { $0[0].string })
        return tables.filter { !present.contains($0) }
    }

    /// Creates the catalog in an empty or plain SpatiaLite database
    /// (`version` below the current one only to test upgrades), in one
    /// transaction begun before anything is read: a second creator of the
    /// same file waits for it, then finds the catalog and refuses, and a
    /// failure leaves nothing behind. `whileLocked` runs first inside it (a
    /// caller's own checks, which another writer cannot then invalidate).
    public static func create(_ db: Connection, version: Int = currentVersion, whileLocked: () throws -> Void = {}) throws {
        guard db.hasSpatiaLite else { throw CatalogError.spatiaLiteMissing("creating a catalog") }
        try db.transaction {
            try refuseExisting(db)
            try whileLocked()
            let hasMetadata = try db.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'spatial_ref_sys'").int64 == 1
            // Argument 0: no transaction of SpatiaLite's own, so it runs in this one.
            if !hasMetadata, try db.scalar("SELECT InitSpatialMetadata(0)").int64 != 1 {
                throw CatalogError("SpatiaLite could not create its metadata tables (spatial_ref_sys, geometry_columns, …): "
                                   + "the database may hold tables of those names that are not SpatiaLite's")
            }
            for (v, _, script) in EmbeddedSQL.migrations where v <= version { try apply(db, v, script) }
            try db.query("INSERT INTO gf_meta (key, value) VALUES ('created_by', ?)", [.text(packageName)])
            // An older version's catalog is made as its build made it (tests of the upgrade, which writes it).
            if version == currentVersion { try SuggestedCache.write(db) }
        }
    }

    /// Refuses a database that already holds a catalog, of any version.
    public static func refuseExisting(_ db: Connection) throws {
        switch try state(of: db) {
        case .absent: if let m = try StateDatabase.notACatalog(db) { throw CatalogError(m) }
        case .current: throw CatalogError("the database already holds a geofence catalog (schema version \(currentVersion))")
        case .older(let v): throw CatalogError("the database already holds a geofence catalog (schema version \(v)); open it to upgrade")
        case .newer(let v): throw newerError(v, db)
        }
    }

    /// Checks the version; upgrades an older catalog in place; re-creates the
    /// catalog-stamp triggers if the file lost them or carries altered ones
    /// (when the file can be written: a reader does not depend on them).
    public static func open(_ db: Connection) throws {
        switch try state(of: db) {
        case .absent: throw CatalogError(try StateDatabase.notACatalog(db) ?? "no geofence catalog in this database: run `geofence init` first")
        case .current: break
        case .newer(let v): throw newerError(v, db)
        case .older:
            try db.transaction {
                // Read again under the write lock: another command opening the
                // same file may have upgraded it while this one waited for the lock.
                guard case .older(let v) = try state(of: db) else { return }
                try SchemaConversions.refuseUserObjects(db, upgradingFrom: v)
                for (version, _, script) in EmbeddedSQL.migrations where version > v { try apply(db, version, script) }
                try SuggestedCache.write(db, schema: StateDatabase.catalogSchema(db))
                try db.query("INSERT OR REPLACE INTO gf_meta (key, value) VALUES ('upgraded_by', ?)", [.text(packageName)])
            }
        }
        let damaged = try CatalogStamp.damaged(db)
        if !damaged.isEmpty && !db.isReadOnly {
            try db.transaction { try CatalogStamp.repair(db, damaged) }
        }
    }

    /// Refuses a catalog at another version, for code that runs on a
    /// connection it did not open (the extension's functions): upgrading is
    /// the job of whoever opens the file, never a side effect of a query.
    public static func requireCurrent(_ db: Connection, for what: String) throws {
        switch try state(of: db) {
        case .current: return try StateDatabase.requireStateInMain(db)
        case .absent: throw CatalogError(try StateDatabase.notACatalog(db) ?? "no geofence catalog in this database: create one with `geofence init`")
        case .newer(let v): throw newerError(v, db)
        case .older(let v):
            throw CatalogError("the catalog has schema version \(v), and \(what) needs version \(currentVersion): "
                               + "upgrade it in place by opening it once with the command-line tool (e.g. `geofence settings DB`)")
        }
    }

    /// Refuses a catalog newer than this build, for the extension's functions
    /// that only read areas and settings: they answer on an older catalog
    /// (what they read is unchanged since version 1), never on a newer one,
    /// whose meaning this build cannot know. One statement, as it runs per
    /// call; a database without `gf_meta` passes (no catalog: the function's
    /// own read says so).
    public static func refuseNewer(_ db: Connection) throws { try refuseNewer(db, in: .unqualified) }

    /// The same, reading gf_meta where `tables` says the catalog is.
    static func refuseNewer(_ db: Connection, in tables: CatalogTables) throws {
        let stored = try? db.scalar("SELECT CAST(value AS INTEGER) FROM \(tables.named("gf_meta")) WHERE key = 'schema_version'").int64
        if let v = stored, v > currentVersion { throw newerError(Int(v), db) }
    }

    /// Runs one migration: its script, or the part above `-- @convert`, the
    /// version's conversion and the part below (`SchemaConversions`).
    static func apply(_ db: Connection, _ version: Int, _ script: String) throws {
        if let split = script.firstRange(of: SchemaConversions.marker) {
            guard let conversion = SchemaConversions.byVersion[version] else {
                throw CatalogError("schema version \(version) has a conversion step, and this build registers none for it")
            }
            try db.execute(String(script[..<split.lowerBound]))
            try conversion.convert(db)
            try db.execute(String(script[split.upperBound...]))
        } else {
            try db.execute(script)
        }
        try db.query("INSERT OR REPLACE INTO gf_meta (key, value) VALUES ('schema_version', ?)", [.text(String(version))])
    }

    /// What `created_by` and `upgraded_by` hold: this package and its version.
    static var packageName: String { "geofence " + GeofenceVersion.string }

    /// The refusal of a catalog whose schema is newer than this build's: it
    /// names the package that last wrote the catalog's schema (`upgraded_by`,
    /// else `created_by`; a catalog may carry neither), which opens it.
    public static func newerError(_ v: Int, _ db: Connection) -> CatalogError {
        let writer = try? db.scalar("""
            SELECT value FROM gf_meta WHERE key IN ('upgraded_by', 'created_by') AND value <> ''
            ORDER BY key = 'upgraded_by' DESC LIMIT 1
            """).string
        // Builds before the first release all say 0.1.0: then the schema number, not the version, tells them apart.
        let use = writer == packageName
            ? "it was written by another build of \(packageName) (before the first release every build has that version): "
                + "use a build that knows schema version \(v), or a later one"
            : writer.map { "it was written by \($0): use that version of geofence or a later one" }
                ?? "use the version of geofence that wrote it, or a later one"
        return CatalogError("the database has schema version \(v), newer than this geofence \(GeofenceVersion.string) understands "
                            + "(schema versions 1 to \(currentVersion)): \(use); nothing was changed (docs/versions.md)")
    }
}

public enum GeofenceVersion {
    public static let string = "0.1.0"
}

/// An error about the catalog's state (not about one input record).
public struct CatalogError: Error, CustomStringConvertible {
    public var message: String
    /// The file the message names at its start, when it names one.
    public private(set) var file: String?
    public init(_ message: String) { self.message = message }
    /// An error about `file`: the message begins with its name.
    public init(file: String, _ what: String) { message = "\(file): \(what)"; self.file = file }
    public var description: String { message }

    /// This error as one about `file`, for a command's caller: unchanged
    /// when it names a file already, else its message after the file's name.
    public func about(file path: String) -> CatalogError { file == nil ? CatalogError(file: path, message) : self }

    static func spatiaLiteMissing(_ what: String) -> CatalogError {
        CatalogError("SpatiaLite is not loaded in this connection, and \(what) needs it: run `.load mod_spatialite` (or SELECT load_extension('mod_spatialite')) first")
    }
}

extension CatalogError {
    /// A row whose area_id is no text (a BLOB or NULL, written past the
    /// catalog's constraints): it names no area, so no pair or notification
    /// could name it, and leaving it out would lose its answers silently.
    static func unnamedArea(row: Int64?, _ value: SQLiteValue) -> CatalogError {
        let what = if case .null = value { "no area_id" } else { "an area_id that is not text (a BLOB)" }
        let which = row.map { "gf_areas row \($0)" } ?? "an area of gf_areas"
        return CatalogError("\(which) has \(what): an area is named by its text id; give it one or remove the row")
    }

    /// Column `i` of the row `s` is on, an area's id: text whose bytes are
    /// UTF-8, else the catalog's error naming the row. Text that is not
    /// UTF-8 (SQLite stores any bytes it is given as TEXT) would be read with
    /// its bad bytes replaced, an id that finds neither the area's conditions
    /// nor the area itself: the area would be met and silently not judged.
    static func areaId(_ s: Statement, _ i: Int, row: Int64?) throws -> String {
        if let id = s.validText(i) { return id }
        let value = s.value(i)
        guard case .text = value else { throw unnamedArea(row: row, value) }
        throw notUTF8AreaId(s, i, of: row.map { "gf_areas row \($0)" } ?? "an area of gf_areas",
                            mend: "every door names an area by its text; give it a UTF-8 id", remove: "the row")
    }

    /// `which` has an area_id (column `i` of the row `s` is on, text) that is
    /// not UTF-8: its first bytes in hex, and how to mend it.
    static func notUTF8AreaId(_ s: Statement, _ i: Int, of which: String, mend: String, remove: String) -> CatalogError {
        let bytes = s.withText(i) { Array($0.prefix(32)) }
        return CatalogError("\(which) has an area_id that is not UTF-8 text (bytes \(Echo.hex(bytes))\(bytes.count == 32 ? "…" : "")): "
                            + "\(mend) (UPDATE gf_areas SET area_id = …, then the same in gf_conditions) or remove \(remove)")
    }
}
