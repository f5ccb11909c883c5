import GeofenceCore

/// Portable per-subject state from SQL (docs/state.md), for the doors that
/// have no command line (a phone's SQLite, a Python process):
///
///     SELECT gf_state_export('u1');                -- the subject's record, or NULL
///     SELECT gf_state_import('u1', :record);       -- 1; refused if u1 has state
///     SELECT gf_state_import('u1', :record, 1);    -- 1; replaces u1's state
///     SELECT gf_state_init();                      -- 1; main becomes a state database (`StateDatabase`)
///     SELECT gf_state_upgrade();                   -- 1; a state database of version 10 or 11 upgraded in place
///
/// gf_state_import changes state, so it is direct-only as gf_check is, and
/// one call is one transaction (`CallTransaction`): the record and its
/// gf_inside rows together, or nothing. Both go through `StateTransfer`, as
/// `geofence state export|import` do, with the same checks and refusals.
enum StateFunctions {
    static func register(_ db: Connection) throws {
        try registerStateInit(db)
        try db.createFunction("gf_state_export", arities: [1], argumentNames: ["subject_id"], flags: FunctionFlags.reading) { a in
            if a.isNull(0) { return .null }
            let subject = try a.text(0)
            return try answering("gf_state_export", a.connection) {
                try StateTransfer(a.connection).record(of: subject).map { .text($0) } ?? .null
            }
        }

        try db.createFunction("gf_state_import", arities: [2, 3], argumentNames: ["subject_id", "record", "replace"],
                              flags: FunctionFlags.changing) { a in
            guard !a.isNull(0) else { throw a.fail(0, "must be a subject_id, not NULL") }
            guard !a.isNull(1) else { throw a.fail(1, "must be a state record (JSON text), not NULL") }
            let subject = try a.text(0), text = try a.text(1)
            var replace = false
            if a.count > 2 && !a.isNull(2) {
                let r = try a.double(2)
                guard r == 0 || r == 1 else { throw a.fail(2, "must be 0 (refuse a subject that has state) or 1 (replace its state)") }
                replace = r == 1
            }
            let conn = a.connection
            return try answering("gf_state_import", conn) {
                let checked = try StateTransfer.check(subject: subject, text: text)
                let session = try Session.of(conn)
                let stored = try session.stateImport.run { try StateTransfer(conn).put(checked, replace: replace) }
                guard stored else {
                    throw InputError("subject \(Echo.quoted(subject)) already has state in this catalog: "
                                     + "gf_state_import(subject_id, record, 1) replaces it")
                }
                return .integer(1)
            }
        }
    }

    /// gf_state_init(): makes main a state database for the catalog
    /// attached to it (`StateDatabase`), in one transaction; 1.
    static func registerStateInit(_ db: Connection) throws {
        try db.createFunction("gf_state_init", arities: [0], argumentNames: [], flags: FunctionFlags.changing) { a in
            let conn = a.connection
            do {
                let session = try Session.of(conn)
                try session.stateInit.run { try StateDatabase.create(conn) }
                // main's tables changed: whatever the session read is not what it will judge with.
                session.forget()
                return .integer(1)
            } catch let e as CatalogError {
                throw FunctionError("gf_state_init: \(e.message)")
            }
        }
        try db.createFunction("gf_state_upgrade", arities: [0], argumentNames: [], flags: FunctionFlags.changing) { a in
            let conn = a.connection
            do {
                let session = try Session.of(conn)
                let upgraded = try session.stateUpgrade.run { try StateDatabase.upgrade(conn) }
                session.forget()
                return .integer(upgraded ? 1 : 0)
            } catch let e as CatalogError {
                throw FunctionError("gf_state_upgrade: \(e.message)")
            }
        }
    }

    /// Runs `body` on a catalog of the current schema, its refusals as SQL
    /// errors prefixed with the function's name.
    private static func answering(_ function: String, _ db: Connection, _ body: () throws -> SQLiteValue) throws -> SQLiteValue {
        do {
            try Schema.requireCurrent(db, for: function)
            return try body()
        } catch let e as InputError {
            throw FunctionError("\(function): \(e.message)")
        } catch let e as CatalogError {
            throw FunctionError("\(function): \(e.message)")
        }
    }
}
