import CSQLite
import GeofenceCore

/// Per-connection state that must outlive one SQL function call: gf_check's
/// prepared statements, prepared areas, windows of the spatial index around
/// recent fixes (`CandidateWindows`), the subject state it saved last and the
/// dictionary keys its notifications were stored under (`RunOutput.begin`).
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
/// Freshness: the cached catalog is dropped whenever the database that
/// holds it may have changed since the session's last call: another
/// connection committed to it (its `PRAGMA data_version`), this connection
/// changed rows in it (`sqlite3_total_changes64` moved past what gf_check
/// itself wrote), the catalog is not the one the cache was read from
/// (`gf_meta.catalog_stamp`, a random value every change of an area,
/// condition or setting replaces: a rolled-back change takes its stamp with
/// it, which neither count shows), or the schema changed (`PRAGMA
/// schema_version`, of the database and of its temporary schema: a trigger
/// added, say), or, with the catalog attached, the attached databases did
/// (a DETACH and ATTACH can put another catalog first).
///
/// Why any commit, not the stamp alone: the stamp is kept by triggers, and
/// a change made with triggers off (`SQLITE_DBCONFIG_ENABLE_TRIGGER`), to
/// the spatial index directly, or after the stamp's row was deleted, leaves
/// it as it was. With the state kept apart (a state database with the
/// catalog attached read-only, `StateDatabase`) the catalog's file is its
/// own: only its data_version and schema_version count, so many writers of
/// one state database (each call a commit) keep their sessions' catalogs.
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
    private var dataVersion: Statement?
    private var catalogStamp: Statement?
    /// The schema `catalogStamp` reads the catalog's gf_meta in.
    private var stampSchema: String?
    private var databaseList: Statement?
    private var schemaVersion: Statement?
    private var tempSchemaVersion: Statement?
    /// Of the attached catalog a state database judges with (`StateDatabase`):
    /// main's data_version and schema_version do not move when another
    /// connection changes an attached database.
    private var catalogVersions: (data: Statement, schema: Statement)?
    /// The schema versions of main and temp as one number, as `currentJudgement` read them last.
    private(set) var schema: Int64 = -1
    /// Whether the subject state saved by one call may be reused by the next (no trigger of the user's on the tables gf_check writes).
    private(set) var trustsState = false

    /// The tables gf_check writes (lower case: a trigger's table is matched
    /// as SQLite matches names, without regard to case), and the engine's
    /// own triggers on them, known by name and text (the id floor's run on a
    /// DELETE or an UPDATE of an id, which no call makes).
    static let writtenTables = ["gf_notification_rows", "gf_subject_keys", "gf_area_keys", "gf_explain", "gf_subject_state", "gf_inside", "gf_runs"]
    static let ownTriggers = CatalogStamp.floorTriggers.map(\.name)

    /// Each gf_check call's transaction (or savepoint).
    private(set) lazy var transaction = CallTransaction(db, function: "gf_check")
    /// Each gf_state_import call's transaction (or savepoint).
    private(set) lazy var stateImport = CallTransaction(db, function: "gf_state_import")
    /// The gf_state_init call's transaction (or savepoint).
    private(set) lazy var stateInit = CallTransaction(db, function: "gf_state_init")
    private(set) lazy var stateUpgrade = CallTransaction(db, function: "gf_state_upgrade")
    /// Each gf_prune call's transaction (or savepoint).
    private(set) lazy var prune = CallTransaction(db, function: "gf_prune")
    /// Statements the connection's other functions keep from call to call
    /// (gf_area_contains' row of an area), finalized with the session.
    private(set) lazy var kept = StatementCache(db)
    /// Refuses a call from a statement that reads the notifications the calls write.
    private(set) lazy var outputReaders = OutputReaders(db, function: "gf_check", table: "gf_notification_rows")

    init(_ db: Connection) { self.db = db }

    /// The judgement to use now: the cached one if the database is as this
    /// session left it. A refusal names `function`, the one calling.
    func currentJudgement(for function: String = "gf_check") throws -> Judgement {
        let now: Stamp
        do {
            now = try currentStamp()
        } catch where catalogVersions != nil {
            // The attached catalog was detached (or attached again under
            // another name): find it anew, as a fresh connection would.
            (catalogVersions, judgement, catalogStamp) = (nil, nil, nil)
            now = try currentStamp()
        }
        schema = now.schema
        if let j = judgement, now == stamp { return j }
        let j = try Judgement(db)  // checks the schema version first
        let catalog = try StateDatabase.catalogSchema(db)
        if catalog != stampSchema { catalogStamp = nil }   // another catalog (attached again, or another first): its stamp
        catalogVersions = catalog == "main" ? nil
            : (try db.prepare("PRAGMA \(catalog).data_version"), try db.prepare("PRAGMA \(catalog).schema_version"))
        if let refusal = try CatalogStamp.refusal(db) { throw FunctionError("\(function): " + refusal) }
        let tables = Self.writtenTables.map { "'\($0)'" }.joined(separator: ", ")
        // An own trigger counts as the user's unless its name and its text are the engine's.
        let own = Self.ownTriggers.indices.map { "(name = ?\(2 * $0 + 1) AND sql = ?\(2 * $0 + 2))" }.joined(separator: " OR ")
        let ownText: [SQLiteValue] = Self.ownTriggers.flatMap { [.text($0), .text(Connection.engineTriggers[$0] ?? "")] }
        trustsState = try db.scalar("""
            SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND lower(tbl_name) IN (\(tables)) AND NOT (\(own)))
                 + (SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger' AND lower(tbl_name) IN (\(tables)))
            """, ownText).int64 == 0
        judgement = j
        // Read again: the attached catalog's versions are part of it from now on.
        stamp = catalogVersions == nil ? now : try currentStamp()
        return j
    }

    /// Records the state after this session's own writes; a catalog or
    /// schema that changed during the call (a user's trigger: gf_check never
    /// changes them) drops the cache instead.
    func settle() throws {
        // With no trigger of the user's on the tables gf_check writes, only the
        // call's own writes happened during it (a trigger cannot change the
        // schema, and no other connection commits to main while the call holds
        // its write lock): the change count is all that moved here. An attached
        // catalog another connection changed meanwhile shows at the next call,
        // in its own versions (`catalogVersions`).
        if trustsState { stamp.changes = catalogVersions == nil ? sqlite.pointee.total_changes64!(db.handle) : 0; return }
        let now = try currentStamp()
        if now.catalog != stamp.catalog || now.schema != stamp.schema { forget() } else { stamp = now }
    }

    private func currentStamp() throws -> Stamp {
        if dataVersion == nil { dataVersion = try db.prepare("PRAGMA main.data_version") }
        // In the catalog's schema: a TEMP gf_meta of the caller's is not the catalog's stamp.
        if catalogStamp == nil {
            let schema = try StateDatabase.catalogSchema(db)
            catalogStamp = try db.prepare("SELECT value FROM \(schema).gf_meta WHERE key = 'catalog_stamp'")
            stampSchema = schema
        }
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
        guard let attached = catalogVersions else {
            return Stamp(changes: sqlite.pointee.total_changes64!(db.handle), dataVersion: try first(dataVersion!).int64 ?? 0,
                         catalog: catalog, schema: schema)
        }
        schema = schema &* 65_537 &+ (try first(attached.schema).int64 ?? 0)
        return Stamp(changes: 0, dataVersion: try first(attached.data).int64 ?? 0, catalog: catalog, schema: schema,
                     databases: try attachedDatabases())
    }

    /// The attached databases' names, files and whether each is read-only, as one number (FNV-1a).
    private func attachedDatabases() throws -> Int64 {
        let s = try databaseList ?? db.prepare("PRAGMA database_list")
        databaseList = s
        try s.bind([])
        defer { s.reset() }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        while try s.step() {
            let name = s.value(1).string ?? ""
            for text in [name, s.value(2).string ?? ""] {
                for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
                hash = (hash ^ 0xff) &* 0x100_0000_01b3
            }
            // Attached again read-write under the same name and file: a catalog the calls must refuse.
            hash = (hash ^ UInt64(UInt32(bitPattern: sqlite.pointee.db_readonly!(db.handle, name)))) &* 0x100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    /// Drops the cached judgement: after a failed call, whose writes were undone.
    func forget() { judgement = nil; stamp = Stamp.none }

    func close() { kept = StatementCache(db); judgement = nil; catalogVersions = nil; dataVersion = nil; catalogStamp = nil; databaseList = nil; schemaVersion = nil; tempSchemaVersion = nil; transaction.close(); stateImport.close(); stateInit.close(); prune.close(); outputReaders.close() }

    // MARK: Registry

    private static let lock = Lock()
    nonisolated(unsafe) private static var sessions: [OpaquePointer: Session] = [:]

    /// This connection's session, connecting `gf_session` if needed: by
    /// preparing a statement on it, not stepping one, which would begin a read
    /// transaction (inside the caller's deferred `BEGIN`, a snapshot the call
    /// could then not wait for the write lock from: `CallTransaction`).
    static func of(_ db: Connection) throws -> Session {
        if let s = lock.with({ sessions[db.handle] }) { return s }
        // Named in main, where SQLite keeps eponymous tables: a TEMP or attached
        // table of that name is not taken for it.
        _ = try db.prepare("SELECT * FROM main.gf_session")
        guard let s = lock.with({ sessions[db.handle] }) else {
            throw FunctionError("gf_session did not connect: a table or view named gf_session in main hides the extension's own "
                                + "(the name is the extension's, docs/sql.md): rename it")
        }
        return s
    }

    /// Whether a call of this connection's session is running now: a call
    /// made from inside it (a trigger of the user's) is refused by the
    /// running one's transaction (`CallTransaction.run`), whatever it was given.
    static func isCalling(_ db: Connection) -> Bool {
        lock.with { sessions[db.handle] }?.transaction.isRunning ?? false
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
