/// Schema version 11's conversion (sql/011_notification_id_floor.sql):
/// gf_notification_rows loses AUTOINCREMENT, and its counter becomes the
/// floor no id is given at or below again.
///
///     -- before: CREATE TABLE gf_notification_rows (id INTEGER PRIMARY KEY AUTOINCREMENT, …)
///     -- after:  CREATE TABLE gf_notification_rows (id INTEGER PRIMARY KEY, …)
///     SELECT id FROM gf_notification_floor;   -- sqlite_sequence's counter, which is then removed
///
/// How it works: the table's b-tree is the same with or without
/// AUTOINCREMENT (the keyword only makes SQLite keep sqlite_sequence), so
/// the table is not copied: its CREATE text in sqlite_master is replaced, as
/// SQLite's documentation describes for changes that leave the stored
/// format alone (`writable_schema`, then the schema version moved on, so
/// that every connection, this one too, reads the schema again). Rows,
/// indexes and any trigger of the user's on the table stay as they are. Only
/// the text version 7 wrote is replaced; a table rebuilt or altered by hand
/// is refused, naming it, and the upgrade's one transaction leaves the
/// catalog as it was.
enum NotificationIdFloorConversion: SchemaConversion {
    static var replacedTables: [ReplacedTable] { [] }

    /// The table's text now (the state database's too), and as version 7 wrote it.
    static let text = StateObjects.sql(of: "gf_notification_rows")
    static let version7Text = text.replacing("id           INTEGER PRIMARY KEY,", with: "id           INTEGER PRIMARY KEY AUTOINCREMENT,")

    static func convert(_ db: Connection) throws {
        let stored = try db.scalar("SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = 'gf_notification_rows'").string
        guard stored == version7Text else {
            throw CatalogError("gf_notification_rows is not as schema version 7 made it (rebuilt or altered by hand), so version 11 "
                               + "cannot take AUTOINCREMENT off it in place: restore it from a backup, or rebuild it with the columns "
                               + "version 7 gave it, then open the catalog again")
        }
        // sqlite_sequence exists since version 7 made the table; its row may
        // not (no row written yet), nor be right (edited by hand: a text or a
        // real is read as the integer AUTOINCREMENT read it as): the greatest
        // id stored bounds it from below.
        let counter = try db.scalar("""
            SELECT max(coalesce((SELECT CAST(seq AS INTEGER) FROM main.sqlite_sequence WHERE name = 'gf_notification_rows'), 0),
                       coalesce((SELECT max(id) FROM main.gf_notification_rows), 0))
            """).int64 ?? 0
        try db.query("INSERT INTO main.gf_notification_floor (singleton, id) VALUES (1, ?)", [.integer(counter)])
        let version = try db.scalar("PRAGMA main.schema_version").int64 ?? 0
        try db.execute("PRAGMA main.writable_schema = ON")
        defer { try? db.execute("PRAGMA main.writable_schema = OFF") }
        try db.query("UPDATE main.sqlite_master SET sql = ? WHERE type = 'table' AND name = 'gf_notification_rows'",
                     [.text(text)])
        try db.execute("PRAGMA main.schema_version = \(version + 1)")
        try db.execute("PRAGMA main.writable_schema = OFF")
        try db.execute("DELETE FROM main.sqlite_sequence WHERE name = 'gf_notification_rows'")
    }
}
