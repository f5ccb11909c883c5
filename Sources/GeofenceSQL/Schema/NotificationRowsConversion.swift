import GeofenceCore

/// Schema version 7's conversion (sql/007_notification_rows.sql): the text
/// rows of the old gf_notifications table copied into gf_notification_rows,
/// before the table is dropped and the views take its name and
/// gf_last_notified's.
///
/// Every row keeps its id, so a consumer's cursor (`WHERE id > :last_seen`)
/// stays valid across the upgrade, and AUTOINCREMENT's counter ends past the
/// largest (version 11 makes that counter the id floor). The time becomes microseconds through the engine's own parser of
/// its stored text (integers only: no floating point), the transition 0/1/2,
/// and the local day is the one judging computes: the notification's time in
/// its condition's zone (the condition's own, else its area's, else the
/// catalog's default; a condition since deleted, or a zone that no longer
/// loads, takes the catalog's default zone). The other values are copied as
/// stored. Subjects get keys in byte order (those of gf_subjects too, which
/// the state shares), areas those the notifications name.
enum NotificationRowsConversion: SchemaConversion {
    static var replacedTables: [ReplacedTable] {
        [ReplacedTable(name: "gf_notifications",
                       replacement: "it becomes a view; read new notifications with the cursor "
                           + "SELECT … FROM gf_notifications WHERE id > :last_seen ORDER BY id after each run or gf_check call, see docs/sql.md"),
         ReplacedTable(name: "gf_last_notified",
                       replacement: "it becomes a view derived from the notifications; read it, or the notifications with the cursor of docs/sql.md")]
    }

    /// Fills the two dictionaries, then copies every old row in id order,
    /// 4,096 at a time. Throws, naming the row, for a row the engine never
    /// wrote (a time or a transition edited by hand): the upgrade's one
    /// transaction then leaves the catalog as it was.
    static func convert(_ db: Connection) throws {
        try db.execute("""
            INSERT INTO gf_subject_keys (subject_id)
                SELECT subject_id FROM gf_notifications UNION SELECT subject_id FROM gf_subjects ORDER BY 1;
            INSERT INTO gf_area_keys (area_id) SELECT DISTINCT area_id FROM gf_notifications ORDER BY 1;
            """)
        let zones = try ConditionZones(db)
        let rows = try db.prepare("""
            SELECT n.id, n.run_id, s.subject_key, n.ts, a.area_key, n.condition_id, n.transition, n.lat, n.lon, n.accuracy_m
            FROM gf_notifications AS n JOIN gf_subject_keys AS s ON s.subject_id = n.subject_id JOIN gf_area_keys AS a ON a.area_id = n.area_id
            ORDER BY n.id
            """)
        let insert = try RowBatches(db, "INSERT OR FAIL INTO gf_notification_rows (id, run_id, subject_key, ts_us, area_key, condition_id, "
                                        + "transition, lat, lon, accuracy_m, local_day) VALUES ", columns: 11)
        var batch: [[SQLiteValue]] = []
        while try rows.step() {
            batch.append(try convertedRow(rows, zones))
            if batch.count == 4_096 { try write(batch, insert); batch.removeAll(keepingCapacity: true) }
        }
        try write(batch, insert)
    }

    private enum Old: Int, NamedColumns { case id, run_id, subject_key, ts, area_key, condition_id, transition, lat, lon, accuracy_m }

    /// One old row as the new table's 11 values; a row edited by hand into
    /// something the engine never wrote is refused with its id.
    private static func convertedRow(_ r: Statement, _ zones: ConditionZones) throws -> [SQLiteValue] {
        let id = r.value(Old.id)
        let text = r.value(Old.ts).string ?? ""
        guard let ts = try? Timestamp.parse(text), ts.isStorable else {
            throw CatalogError("gf_notifications row id \(id.int64 ?? 0) has ts \(Echo.quoted(text)), not a time this engine stores: "
                               + "correct or delete that row, then open the catalog again to upgrade it")
        }
        let transition: Int64
        switch r.value(Old.transition).string {
        case "IN": transition = 0
        case "OUT": transition = 1
        case "DWELL": transition = 2
        case let other:
            throw CatalogError("gf_notifications row id \(id.int64 ?? 0) has transition \(Echo.quoted(other ?? "NULL")), not IN, OUT or DWELL: "
                               + "correct or delete that row, then open the catalog again to upgrade it")
        }
        let condition = r.value(Old.condition_id)
        let day = zones.zone(of: condition.int64).local(ts).day
        return [id, r.value(Old.run_id), r.value(Old.subject_key), .integer(ts.microseconds), r.value(Old.area_key), condition,
                .integer(transition), r.value(Old.lat), r.value(Old.lon), r.value(Old.accuracy_m), .integer(Int64(day))]
    }

    /// Inserts `batch`'s rows, each value bound as it is.
    private static func write(_ batch: [[SQLiteValue]], _ insert: RowBatches) throws {
        try insert.write(count: batch.count) { s, i, p in
            for (k, v) in batch[i].enumerated() { try s.bind(v, at: p + Int32(k) + 1) }
        }
    }
}

/// The zone each condition of the catalog is judged in, by condition id
/// (`CatalogDefaults.conditionZone`), and the catalog's default zone for an
/// id the catalog no longer holds. A zone that does not load on this
/// machine is the default's too (judging would refuse its area; the
/// upgrade must not).
private struct ConditionZones {
    private var byCondition: [Int64: TimeZone] = [:]
    private let fallback: TimeZone

    /// Reads the catalog's default zone and every condition's zone.
    init(_ db: Connection) throws {
        let zones = TimeZoneCache()
        let defaultName = try db.scalar("SELECT value FROM gf_settings WHERE key = 'default_timezone'").string ?? "UTC"
        fallback = (try? zones.zone(defaultName)) ?? TimeZone.utc
        let rows = try db.query("""
            SELECT c.condition_id, c.timezone, a.timezone FROM gf_conditions AS c LEFT JOIN gf_areas AS a ON a.area_id = c.area_id
            """)
        for row in rows {
            guard let id = row[0].int64 else { continue }
            let named = row[1].string ?? row[2].string
            byCondition[id] = named.flatMap { try? zones.zone($0) } ?? fallback
        }
    }

    /// The zone of `condition` (nil: a row without one), else the catalog's default.
    func zone(of condition: Int64?) -> TimeZone { condition.flatMap { byCondition[$0] } ?? fallback }
}
