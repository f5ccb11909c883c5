import CSQLite
import GeofenceCore

/// Per-connection state that must outlive one SQL function call: gf_check's
/// prepared statements, prepared areas, windows of the spatial index around
/// recent fixes (`CandidateWindows`) and the subject state it saved last.
///
/// Why a virtual table: a host may close its connection with plain
/// sqlite3_close, which refuses (SQLITE_BUSY) while any statement is still
/// prepared, and a function's user data is destroyed only after that check.
/// SQLite does disconnect eponymous virtual tables before the check, so the
/// session lives in the xConnect/xDisconnect of the hidden table `gf_session`:
/// connecting it (by preparing `SELECT * FROM gf_session`) creates the
/// session, closing the connection finalizes its statements first.
///
///     SELECT * FROM gf_session;   -- one row: whether this connection has a cached judgement
///
/// Freshness: the cached catalog is dropped whenever the catalog may have
/// changed since the session read it: the catalog is not the one the cache
/// was read from (`gf_meta.catalog_stamp`, a random value every change of
/// an area, condition or setting replaces, on any connection: a rolled-back
/// change takes its stamp with it, so the stamp names the content), or the
/// schema changed (`PRAGMA schema_version`, of the database and of its
/// temporary schema: a trigger added, say), or an attached catalog (a state
/// database's, `StateDatabase`) changed at all (its `data_version`).
///
/// Other writes keep it: another process's gf_check calls, the user's own
/// tables. With many writers on one catalog every call follows another
/// connection's commit, and reading the catalog afresh at each (its index,
/// its areas prepared again) cost a call tens of milliseconds. What those
/// writes change is read at every call anyway: a subject's state comes from
/// its record, the saved state reused only while the record's text is the
/// one saved (`StateStore`), and the output keys are looked up afresh in
/// each call's transaction (`OutputKeys`).
///
/// A trigger of the user's on a table gf_check writes (a queue fed from
/// gf_notification_rows, say) may change the state or the catalog during the
/// call itself. So while such a trigger exists the session keeps no subject
/// state between calls (`trustsState`), and a catalog stamp that moved
/// during a call drops the cache: every call then sees what the call before
/// left, as a call on a fresh connection does.
final class Session {
    private let db: Connection
    private var judgement: Judgement?
    private var stamp = Stamp.none
    private var catalogStamp: Statement?
    private var schemaVersion: Statement?
    private var tempSchemaVersion: Statement?
    /// Of the attached catalog a state database judges with (`StateDatabase`):
    /// main's schema_version does not move when another connection changes
    /// an attached database.
    private var catalogVersions: (data: Statement, schema: Statement)?
    /// The schema versions of main and temp as one number, as `currentJudgement` read them last.
    private(set) var schema: Int64 = -1
    /// Whether the subject state saved by one call may be reused by the next (no trigger of the user's on the tables gf_check writes).
    private(set) var trustsState = false

    /// What the cached catalog was read with: while the database shows the
    /// same, the catalog is the one cached.
    struct Stamp: Equatable {
        /// `gf_meta.catalog_stamp`.
        var catalog: String
        /// The schema versions of main, temp and an attached catalog, as one number.
        var schema: Int64
        /// An attached catalog's `data_version` (0 without one).
        var attachedData: Int64
        static let none = Stamp(catalog: "", schema: -1, attachedData: -1)
    }

    /// The tables gf_check writes (lower case: a trigger's table is matched
    /// as SQLite matches names, without regard to case), and the engine's
    /// own triggers on them.
    static let writtenTables = ["gf_notification_rows", "gf_subject_keys", "gf_area_keys", "gf_explain", "gf_subject_state", "gf_inside", "gf_runs"]
    static let ownTriggers: [String] = []

    /// Each gf_check call's transaction (or savepoint).
    private(set) lazy var transaction = CallTransaction(db, function: "gf_check")
    /// Each gf_state_import call's transaction (or savepoint).
    private(set) lazy var stateImport = CallTransaction(db, function: "gf_state_import")
    /// The gf_state_init call's transaction (or savepoint).
    private(set) lazy var stateInit = CallTransaction(db, function: "gf_state_init")
    /// Each gf_prune call's transaction (or savepoint).
    private(set) lazy var prune = CallTransaction(db, function: "gf_prune")
    /// Refuses a call from a statement that reads the notifications the calls write.
    private(set) lazy var outputReaders = OutputReaders(db, function: "gf_check", table: "gf_notification_rows")

    init(_ db: Connection) { self.db = db }

    /// The judgement to use now: the cached one if the database is as this session left it.
    func currentJudgement() throws -> Judgement {
        let now = try currentStamp()
        schema = now.schema
        if let j = judgement, now == stamp { return j }
        let j = try Judgement(db)  // checks the schema version first
        let catalog = try StateDatabase.catalogSchema(db)
        catalogVersions = catalog == "main" ? nil
            : (try db.prepare("PRAGMA \(catalog).data_version"), try db.prepare("PRAGMA \(catalog).schema_version"))
        // Without its stamp triggers a catalog change rolled back on this
        // connection would go unseen, and the cache would judge by it.
        let damaged = try CatalogStamp.damaged(db)
        if !damaged.isEmpty {
            throw FunctionError("gf_check: the catalog's trigger \(damaged[0]) is missing or altered, so a change of areas, "
                                + "conditions or settings could go unnoticed: open the catalog once with the command-line tool "
                                + "(e.g. `geofence settings DB`), which re-creates it")
        }
        let tables = Self.writtenTables.map { "'\($0)'" }.joined(separator: ", ")
        let own = Self.ownTriggers.map { "'\($0)'" }.joined(separator: ", ")
        trustsState = try db.scalar("""
            SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND lower(tbl_name) IN (\(tables)) AND name NOT IN (\(own)))
                 + (SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger' AND lower(tbl_name) IN (\(tables)))
            """).int64 == 0
        judgement = j
        // Read again: the attached catalog's versions are part of it from now on.
        stamp = catalogVersions == nil ? now : try currentStamp()
        return j
    }

    /// After a call's writes: a catalog or schema that changed during the
    /// call (a user's trigger: gf_check itself never changes them) drops the
    /// cache.
    func settle() throws {
        // With no trigger of the user's on the tables gf_check writes, only the
        // call's own writes happened during it, which change neither.
        if trustsState { return }
        if try currentStamp() != stamp { forget() }
    }

    private func currentStamp() throws -> Stamp {
        if catalogStamp == nil { catalogStamp = try db.prepare("SELECT value FROM gf_meta WHERE key = 'catalog_stamp'") }
        if schemaVersion == nil { schemaVersion = try db.prepare("PRAGMA main.schema_version") }
        if tempSchemaVersion == nil { tempSchemaVersion = try db.prepare("PRAGMA temp.schema_version") }
        func first(_ s: Statement) throws -> SQLiteValue {
            try s.bind([])
            defer { s.reset() }
            return try s.step() ? s.value(0) : .null
        }
        let catalog = try first(catalogStamp!).string ?? ""
        // A TEMP trigger (on this connection, after some calls) changes only the temp schema's version.
        var schema = (try first(schemaVersion!).int64 ?? 0) &* 4_294_967_296 &+ (try first(tempSchemaVersion!).int64 ?? 0)
        var attachedData: Int64 = 0
        if let attached = catalogVersions {
            attachedData = try first(attached.data).int64 ?? 0
            schema = schema &* 65_537 &+ (try first(attached.schema).int64 ?? 0)
        }
        return Stamp(catalog: catalog, schema: schema, attachedData: attachedData)
    }

    /// Drops the cached judgement: after a failed call, whose writes were undone.
    func forget() { judgement = nil; stamp = Stamp.none }

    func close() { judgement = nil; catalogVersions = nil; catalogStamp = nil; schemaVersion = nil; tempSchemaVersion = nil; transaction.close(); stateImport.close(); stateInit.close(); prune.close(); outputReaders.close() }

    // MARK: Registry

    private static let lock = Lock()
    nonisolated(unsafe) private static var sessions: [OpaquePointer: Session] = [:]

    /// This connection's session, connecting `gf_session` if needed: by
    /// preparing a statement on it, not stepping one, which would begin a read
    /// transaction (inside the caller's deferred `BEGIN`, a snapshot the call
    /// could then not wait for the write lock from: `CallTransaction`).
    static func of(_ db: Connection) throws -> Session {
        if let s = lock.with({ sessions[db.handle] }) { return s }
        _ = try db.prepare("SELECT * FROM gf_session")
        guard let s = lock.with({ sessions[db.handle] }) else { throw FunctionError("gf_session did not connect") }
        return s
    }

    fileprivate static func add(_ s: Session, for handle: OpaquePointer) { lock.with { sessions[handle] = s } }
    fileprivate static func remove(_ handle: OpaquePointer) { lock.with { sessions[handle] = nil } }
}

/// The eponymous table that owns each connection's `Session`.
enum SessionTable {
    static func register(_ db: Connection) throws {
        try db.check(sqlite.pointee.create_module_v2!(db.handle, "gf_session", module, nil, nil))
    }

    final class Table {
        let handle: OpaquePointer
        let session: Session
        init(_ handle: OpaquePointer) { self.handle = handle; session = Session(Connection(borrowing: handle)) }
    }

    /// Written once, then only read by SQLite.
    nonisolated(unsafe) static let module: UnsafeMutablePointer<sqlite3_module> = {
        let m = UnsafeMutablePointer<sqlite3_module>.allocate(capacity: 1)
        m.initialize(to: sqlite3_module())
        m.pointee.iVersion = 1
        m.pointee.xConnect = { db, _, _, _, out, _ in
            guard let db, let out else { return SQLITE_ERROR }
            let rc = sqlite.pointee.declare_vtab!(db, "CREATE TABLE x(cached INTEGER)")
            guard rc == SQLITE_OK else { return rc }
            let v = UnsafeMutablePointer<csqlite_vtab>.allocate(capacity: 1)
            v.initialize(to: csqlite_vtab())
            let table = Table(db)
            Session.add(table.session, for: db)
            v.pointee.owner = Unmanaged.passRetained(table).toOpaque()
            out.pointee = UnsafeMutableRawPointer(v).assumingMemoryBound(to: sqlite3_vtab.self)
            return SQLITE_OK
        }
        m.pointee.xDisconnect = { v in
            guard let v else { return SQLITE_OK }
            let base = UnsafeMutableRawPointer(v).assumingMemoryBound(to: csqlite_vtab.self)
            let t = Unmanaged<Table>.fromOpaque(base.pointee.owner)
            Session.remove(t.takeUnretainedValue().handle)
            t.takeUnretainedValue().session.close()
            t.release()
            base.deallocate()
            return SQLITE_OK
        }
        m.pointee.xBestIndex = { _, info in info?.pointee.estimatedCost = 1; info?.pointee.estimatedRows = 1; return SQLITE_OK }
        m.pointee.xOpen = { _, out in
            let c = UnsafeMutablePointer<csqlite_vtab_cursor>.allocate(capacity: 1)
            c.initialize(to: csqlite_vtab_cursor())
            out?.pointee = UnsafeMutableRawPointer(c).assumingMemoryBound(to: sqlite3_vtab_cursor.self)
            return SQLITE_OK
        }
        m.pointee.xClose = { c in
            if let c { UnsafeMutableRawPointer(c).assumingMemoryBound(to: csqlite_vtab_cursor.self).deallocate() }
            return SQLITE_OK
        }
        // One row; owner doubles as "row consumed".
        m.pointee.xFilter = { c, _, _, _, _ in
            UnsafeMutableRawPointer(c!).assumingMemoryBound(to: csqlite_vtab_cursor.self).pointee.owner = nil
            return SQLITE_OK
        }
        m.pointee.xNext = { c in
            UnsafeMutableRawPointer(c!).assumingMemoryBound(to: csqlite_vtab_cursor.self).pointee.owner = UnsafeMutableRawPointer(bitPattern: 1)
            return SQLITE_OK
        }
        m.pointee.xEof = { c in
            UnsafeMutableRawPointer(c!).assumingMemoryBound(to: csqlite_vtab_cursor.self).pointee.owner == nil ? 0 : 1
        }
        m.pointee.xColumn = { c, ctx, _ in
            let base = UnsafeMutableRawPointer(c!.pointee.pVtab!).assumingMemoryBound(to: csqlite_vtab.self)
            let t = Unmanaged<Table>.fromOpaque(base.pointee.owner).takeUnretainedValue()
            sqlite.pointee.result_int!(ctx, t.session.hasJudgement ? 1 : 0)
            return SQLITE_OK
        }
        m.pointee.xRowid = { _, rowid in rowid?.pointee = 1; return SQLITE_OK }
        return m
    }()
}

extension Session {
    var hasJudgement: Bool { judgement != nil }
}
