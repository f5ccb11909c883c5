/// Whether the next notification row may take SQLite's own id (the greatest
/// stored + 1), or must take one above the floor (schema version 11).
///
///     SELECT id FROM gf_notification_floor;            -- no id at or below it is given again
///     DELETE FROM gf_notifications WHERE id = 9;       -- the newest: the floor becomes 9, the greatest id 8
///     SELECT gf_check('u1', '2026-11-20T09:00:00Z', 35.71, 139.77, 10);  -- its first notification: id 10
///
/// Rule: an id is never handed out twice, so a cursor (`WHERE id > :last_seen`)
/// reads each notification once. SQLite's own id is new unless the newest rows
/// were deleted; every delete raises the floor to the ids it took (the table's
/// trigger), so the greatest id below the floor is the one case where the first
/// row of a write must take floor + 1 (the rows after it follow from there).
///
/// How it works: `firstId` reads the floor and the greatest id in one
/// statement. A gf_check session skips that read while what it read still
/// holds (`trusted`), as it keeps its dictionary keys (`RunOutput.begin`):
/// only a delete moves the floor, and a delete on this connection moves its
/// count of changes, another connection's its data_version, either of which
/// ends the trust. One more case: a rollback takes the calls' own rows, and
/// with them the greatest id, back to where the chain of unchanged calls
/// began. So the trust begins only at a check whose greatest id stays at or
/// above the floor whatever is rolled back: in a chain that began with
/// nothing but committed rows (a call that began `.clean`, or a batch run,
/// which one failure ends whole) and has given no id above the floor yet
/// (every write before the trust checks first, so the first check in the
/// chain finds the committed greatest id).
public final class NotificationIds {
    private let db: Connection
    /// Prepared at the first check: a catalog that lost the floor's table is refused first, naming it (`CatalogStamp`).
    private var floorAndGreatest: Statement?
    /// Whether SQLite's own id is known to be new until the trust ends.
    private var trusted = false
    /// Whether the greatest id a check finds now stays where it is whatever is rolled back.
    private var mayTrust = false

    init(_ db: Connection) { self.db = db }

    /// A run or call begins: the trust is kept when nothing changed on this
    /// connection since the last call's writes (`unchanged`); a chain begins
    /// where only committed rows are stored (`fromCommitted`).
    func begin(unchanged: Bool, fromCommitted: Bool) {
        if !unchanged { trusted = false }
        mayTrust = fromCommitted || (unchanged && mayTrust)
    }

    /// Another connection committed since the trust began: it may have deleted rows.
    func forget() { trusted = false }

    static let exhausted = CatalogError("gf_notification_rows has reached id 9223372036854775807, the largest SQLite has, "
                                        + "so no new notification can be given an id above every earlier one (a cursor would skip it): "
                                        + "store the notifications in a new catalog, or export the state (gf_state_export) into one")

    /// Raises the floor to the greatest id, inside the caller's transaction:
    /// the engine's deletes (prune, reset) run it first, so that the trigger
    /// finds each row they delete at or below the floor and writes nothing.
    public static func raiseFloor(_ db: Connection) throws {
        try db.execute("""
            INSERT OR REPLACE INTO main.gf_notification_floor (singleton, id)
            SELECT 1, max(coalesce((SELECT id FROM main.gf_notification_floor WHERE singleton = 1), 0),
                          coalesce((SELECT max(id) FROM main.gf_notification_rows), 0))
            """)
    }

    /// nil: the next row may take SQLite's own id; else the id it must take.
    /// `rows` rows follow: refused if SQLite has no new id left for them.
    func firstId(rows: Int) throws -> Int64? {
        if trusted { return nil }
        let (floor, greatest) = try read(rows: rows)
        // Below the floor the trust does not begin in this chain: a rollback of
        // the row written now would leave the greatest id below it again.
        guard floor <= greatest else { mayTrust = false; return floor + 1 }
        trusted = mayTrust && greatest < Int64.max / 2
        return nil
    }

    /// The id the next row must take, above the greatest and the floor: for a
    /// row a trigger of the user's may meet (a BEFORE INSERT trigger deleting
    /// the newest row runs before SQLite picks its own id, which would then be
    /// the one just deleted).
    func nextId() throws -> Int64 {
        trusted = false
        let (floor, greatest) = try read(rows: 1)
        return max(floor, greatest) + 1
    }

    /// The floor and the greatest id; refused when `rows` more would pass SQLite's largest.
    private func read(rows: Int) throws -> (floor: Int64, greatest: Int64) {
        let floorAndGreatest = try self.floorAndGreatest ?? db.prepare("""
            SELECT coalesce((SELECT id FROM main.gf_notification_floor WHERE singleton = 1), 0),
                   coalesce((SELECT max(id) FROM main.gf_notification_rows), 0)
            """)
        self.floorAndGreatest = floorAndGreatest
        try floorAndGreatest.bind([])
        defer { floorAndGreatest.reset() }
        guard try floorAndGreatest.step() else { return (0, 0) }
        let floor = floorAndGreatest.value(0).int64 ?? 0, greatest = floorAndGreatest.value(1).int64 ?? 0
        // Past the largest rowid SQLite picks one at random, perhaps one given
        // before; a trusted chain (no check per write) starts far below it.
        if max(floor, greatest) > Int64.max - Int64(rows) { throw Self.exhausted }
        return (floor, greatest)
    }
}
