import GeofenceCore

/// gf_prune(before [, max_rows]): retention from SQL (docs/sql.md, gf_prune).
///
///     SELECT gf_prune('2026-10-01');          -- removes up to 50,000 rows older than that day (UTC); how many it removed
///     SELECT gf_prune('2026-10-01', 10000);   -- at most 10,000; call it until it returns 0
///
/// One call removes at most `max_rows` notifications, explanations and runs
/// older than `before` (`Pruning`, the rules of `geofence prune`), as one
/// transaction (`CallTransaction`): in autocommit its own BEGIN IMMEDIATE …
/// COMMIT, inside the caller's transaction a savepoint of it (a function
/// cannot commit the caller's transaction, so there the caller's COMMIT
/// decides, and a loop inside one transaction is not bounded). The bounded
/// form is a loop of autocommit calls until one returns 0. It changes rows,
/// so it is direct-only, as gf_check is: no schema's trigger or view can call it.
enum PruneFunction {
    /// Rows per call when `max_rows` is not given: as `geofence prune`'s chunk.
    static let defaultRows = 50_000

    static func register(_ db: Connection) throws {
        try db.createFunction("gf_prune", arities: [1, 2], argumentNames: ["before", "max_rows"], flags: FunctionFlags.changing) { a in
            let cutoff = try before(a)
            let limit = try maxRows(a)
            let conn = a.connection
            do {
                try Schema.requireCurrent(conn, for: "gf_prune")
                let session = try Session.of(conn)
                let counts = try session.prune.run { try Pruning(conn, cutoffs: .all(cutoff)).step(limit: limit) }
                return .integer(counts.total)
            } catch let e as CatalogError {
                throw FunctionError("gf_prune: \(e.message)")
            } catch let e as InputError {
                throw FunctionError("gf_prune: \(e.message)")
            }
        }
    }

    /// Argument 1: a date (its start in UTC) or a date-time with its offset.
    private static func before(_ a: Arguments) throws -> Timestamp {
        guard !a.isNull(0) else { throw a.fail(0, "must be a date (2026-10-01) or a date-time with its offset, not NULL") }
        let text = try a.text(0)
        do { return try Retention.cutoff(text) } catch let e as InputError { throw a.fail(0, e.message) }
    }

    /// Argument 2: a whole number of rows, 1 or more; absent or NULL: `defaultRows`.
    private static func maxRows(_ a: Arguments) throws -> Int {
        guard a.count > 1, !a.isNull(1) else { return defaultRows }
        let n = try a.double(1)
        guard n >= 1, n <= 1e12, n == n.rounded() else {
            throw a.fail(1, "must be a whole number of rows, 1 or more, got \(n)")
        }
        return Int(n)
    }
}
