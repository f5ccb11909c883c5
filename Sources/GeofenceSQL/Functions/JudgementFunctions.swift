import CSQLite
import GeofenceCore

/// Judgement from SQL. gf_check changes state, so it is direct-only: a view or
/// trigger in a database someone hands you cannot call it.
enum JudgementFunctions {
    /// What a refused time most likely is, told by the time itself: gf_check
    /// has no option for a feed's time unit or zone, which `geofence judge`
    /// offers (`--time-unit ms`, the catalog's default_timezone).
    static func timeHint(_ ts: String, _ way: CheckWay) -> String? {
        if Timestamp.looksLikeEpochMilliseconds(ts) {
            return "; 13 digits read as Unix seconds: epoch milliseconds? \(way.name) takes seconds (divide by 1000.0)"
        }
        if Timestamp.lacksOnlyOffset(ts) {
            return "; \(way.name) reads no time in a zone (not even the catalog's default_timezone, which `geofence judge` applies "
                + "to such times): write its offset, or convert it first"
        }
        return nil
    }

    static func register(_ db: Connection) throws {
        try db.createFunction("gf_time", arities: [1], argumentNames: ["time"], flags: FunctionFlags.pure) { a in
            if a.isNull(0) { return .null }
            do { return .text(try Timestamp.parse(try a.timeText(0)).storageText) } catch let e as Timestamp.ParseError {
                throw a.fail(0, "is not a time: \(e)")
            }
        }

        for way in CheckWay.allCases {
            try db.createFunction(way.name, arities: [5], argumentNames: ["subject_id", "ts", "lat", "lon", "accuracy_m"],
                                  flags: FunctionFlags.changing) { a in try check(a, way) }
        }
    }

    /// The two ways to judge one fix from SQL. Both store the subject's
    /// state and return the call's notifications; `stored` (gf_check) also
    /// writes them to gf_notification_rows, `stream` (gf_check_stream)
    /// does not: a service that acts on the returned text and keeps no
    /// notification table pays no row for them, as `judge
    /// --no-store-notifications` does for a batch. The two may be mixed on
    /// one connection: each call says for itself.
    enum CheckWay: CaseIterable {
        case stored, stream
        var name: String { self == .stored ? "gf_check" : "gf_check_stream" }
    }

    /// One call of `way` (its contract: docs/sql.md, gf_check).
    static func check(_ a: Arguments, _ way: CheckWay) throws -> SQLiteValue {
        let conn = a.connection
        let row = Judgement.Row(subjectId: a.isNull(0) ? nil : try a.text(0), ts: a.isNull(1) ? nil : try a.timeText(1),
                                lat: a.isNull(2) ? nil : try a.double(2), lon: a.isNull(3) ? nil : try a.double(3),
                                accuracy: a.isNull(4) ? nil : try a.double(4))
        do {
            // An invalid fix is refused before the session is asked for anything: a call
            // that fails inside it drops what the session holds (below), and a feed's
            // invalid fixes (iOS's accuracy -1) would each have it read every area again.
            // Not a call from inside a call (a trigger of the user's): the running
            // call's transaction refuses that one, saying why, whatever its fix.
            let valid = Session.isCalling(conn) ? row : Judgement.Row(try Self.validFix(row, a, way))
            // The connection's session keeps the statements, prepared areas, the state
            // it saved last and the dictionary keys it used between calls, as long as
            // nothing else wrote.
            let session = try Session.of(conn)
            do {
                // One call, one transaction: the subject's state and its notifications together.
                // (`run` refuses a call inside a call, from a trigger, in its own words.)
                let notifications = try session.transaction.run(as: way.name) {
                    let judgement = try session.currentJudgement(for: way.name)
                    judgement.storesNotifications = way == .stored
                    // Before anything is written: a statement reading or writing gf_notifications
                    // would meet the rows its calls write, without end. The schema versions are the
                    // ones currentJudgement has just read, in this call's transaction.
                    // (gf_check_stream writes none, and refuses no reader.)
                    if way == .stored { try session.outputReaders.refuseReaders(schema: session.schema) }
                    let (_, notifications) = try judgement.check(valid, recordRun: false, inSession: true, trustingLastSave: session.trustsState,
                                                                  start: session.transaction.start)
                    try session.settle()
                    return notifications
                }
                return .text(String(decoding: NotificationJSON.array(notifications), as: UTF8.self))
            } catch {
                // What the session cached during a call that was undone is not the database's.
                session.forget()
                throw error
            }
        } catch let e as InputError where e.id != nil {
            // Only an area's row is read with its id here (`AreaStore.area`): the call's arguments have none.
            throw FunctionError("\(way.name): area \(Echo.quoted(e.id ?? ""))\(e.field.map { ", \($0)" } ?? ""): \(e.message)")
        } catch let e as InputError {
            throw FunctionError("\(way.name): \(e.message)\(row.ts.flatMap { Self.timeHint($0, way) } ?? "")")
        } catch let e as SQLiteError where e.code & 0xFF == SQLITE_READONLY {
            // A catalog opened or attached read-only (a shared one): say where state can go instead.
            throw FunctionError("\(way.name): \(e.message): this catalog is read-only here, and \(way.name) writes the subject's "
                                + "state\(way == .stored ? " and notifications" : ""); keep what it writes in a state database with the catalog attached read-only "
                                + "(`SELECT gf_state_init()`, docs/state.md), or judge a copy you can write")
        } catch let e as SQLiteError where e.isPlainError {
            // Told by the schema, not the message: a missing catalog table, else the error as it is.
            let missing = (try? Schema.missingTables(a.connection)) ?? []
            guard !missing.isEmpty else { throw e }
            throw FunctionError("\(way.name): no geofence catalog in this database (no \(missing.joined(separator: ", ")) "
                                + "\(missing.count == 1 ? "table" : "tables")): create one with `geofence init`")
        } catch let e as CatalogError {
            throw FunctionError("\(way.name): \(e.message)")
        }
    }

    /// The call's fix, or its refusal naming the argument at fault as every
    /// function names a wrong argument (`gf_check: argument 5 (accuracy_m)
    /// makes the fix invalid: negative accuracy -1.0 …`); a fault of no one
    /// argument as `gf_check: invalid fix: …`.
    static func validFix(_ row: Judgement.Row, _ a: Arguments, _ way: CheckWay) throws -> Fix {
        switch row.validated {
        case .success(let fix): return fix
        case .failure(let why):
            guard let field = why.field else { throw InputError("invalid fix: \(why.reason)") }
            // A refused time says what it most likely is (`timeHint`), as every refusal of it does.
            let hint = field == .ts ? row.ts.flatMap { timeHint($0, way) } ?? "" : ""
            throw a.fail(field.rawValue, "makes the fix invalid: \(why.detail)\(hint)")
        }
    }
}
