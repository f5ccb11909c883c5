/// A state database of an earlier schema version brought to this one in
/// place, when its user asks (`gf_state_upgrade()`): SQL functions never
/// upgrade behind a query, and the command-line tool opens catalogs only.
///
///     SELECT gf_state_upgrade();   -- 1: upgraded (in one transaction); 0: already this version
///
/// From version 10 (sql/011_notification_id_floor.sql), as a catalog is
/// upgraded: the floor's table, AUTOINCREMENT taken off gf_notification_rows
/// with its counter the floor's first value (`NotificationIdFloorConversion`),
/// then the floor's triggers; so the ids a consumer's cursor passed are not
/// given again. From version 11, nothing but the stamp: version 12 changed
/// only a catalog's conditions, none of a state database's objects. Then
/// main is required as gf_check requires it (`requireOwnObjects`: every
/// object as `StateObjects` has it, the id floor's row, none of the attached
/// catalog's names), and anything else (an older state database, one
/// altered by hand) is refused, nothing changed, with the catalog's way:
/// export the state with the build that made it, and import it into a new
/// state database.
extension StateDatabase {
    /// The versions a state database is upgraded from.
    static let upgradedFrom = 10...11

    /// Upgrades main, inside the caller's transaction; false when it is of this version already.
    static func upgrade(_ db: Connection) throws -> Bool {
        guard try db.scalar("SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = 'gf_state_meta'").int64 == 1 else {
            throw CatalogError("main is not a state database (no gf_state_meta): gf_state_upgrade upgrades one made by gf_state_init")
        }
        let version = try db.scalar("SELECT value FROM main.gf_state_meta WHERE key = 'schema_version'").string.flatMap { Int($0) }
        if version == Schema.currentVersion { return false }
        guard let version, upgradedFrom.contains(version) else { throw CatalogError(Self.notUpgradable(version)) }
        if version == 10 { try addIdFloor(db) }
        try db.query("UPDATE main.gf_state_meta SET value = ? WHERE key = 'schema_version'", [.text(String(Schema.currentVersion))])
        // What gf_check will require of it, so that none is upgraded that gf_check then refuses.
        try requireOwnObjects(db, catalog: try catalogSchema(db))
        return true
    }

    /// Version 10 to 11: the notification ids' floor, as a catalog gets it.
    private static func addIdFloor(_ db: Connection) throws {
        if try db.scalar("SELECT count(*) FROM main.sqlite_master WHERE name = 'gf_notification_floor'").int64 != 0 {
            throw CatalogError("main has a gf_notification_floor already, which version 10 did not make (altered by hand), so it "
                               + "cannot be upgraded in place: export the state (gf_state_export) with the build that made it and import "
                               + "it into a new state database")
        }
        try db.execute(StateObjects.sql(of: "gf_notification_floor"))
        try NotificationIdFloorConversion.convert(db)
        for trigger in CatalogStamp.floorTriggers { try db.execute(trigger.sql) }
    }

    /// What to do with a state database of `version`, which this build does not use.
    static func notUpgradable(_ version: Int?) -> String {
        let v = version.map(String.init) ?? "unknown"
        if let version, upgradedFrom.contains(version) {
            return "main is a state database of schema version \(v), and this geofence needs version \(Schema.currentVersion): "
                + "upgrade it in place with SELECT gf_state_upgrade() (docs/state.md), which keeps its notification ids"
        }
        return "main is a state database of schema version \(v), and this geofence needs version \(Schema.currentVersion) (it upgrades "
            + "versions \(upgradedFrom.lowerBound) to \(upgradedFrom.upperBound) only): export its subjects' state (gf_state_export) "
            + "with the build that made it and import it into a new state database, whose notification ids start again at 1 "
            + "(reset your cursor)"
    }
}
