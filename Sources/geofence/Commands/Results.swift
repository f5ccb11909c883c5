import ArgumentParser
import GeofenceCore
import GeofenceSQL

struct Notifications: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List notifications, in canonical order (subject, time, area, condition).")
    @Argument(help: "The database file.") var db: String
    @Option(help: "Only this subject.") var subject: String?
    @Option(parsing: .unconditional, help: "Only notifications at or after this time (ISO 8601 with offset), or date (YYYY-MM-DD: its start in the catalog's default_timezone).") var since: String?
    @Option(name: .customLong("run"), parsing: .unconditional, help: "Only this run.") var runId: Int64?
    @Flag(help: "Print in the seed sample app's layout.") var seed = false
    @OptionGroup var output: OutputOptions
    @Option(help: "For pipelines and GIS tools: csv, ndjson (one JSON object per notification, with a GeoJSON Point geometry), geojson (a FeatureCollection of Point Features, the fields as properties) or geojsonseq (those Features one per line).")
    var format: EventFormat?
    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let sinceText = try since.map { try parseTimeOrDate($0, field: "--since", catalog: conn).storageText }
            try refuseMissingRun(runId, in: conn, db: db, rowsIn: "gf_notification_rows")
            if let runId { try warnIfNotStored(run: runId, conn) }
            let listing = NotificationListing(run: runId, subject: subject, since: sinceText)
            if let format, !seed {
                let out = try OutputFile(nil, database: conn)
                try writeNotifications(conn, listing, format: format, to: out)
                try out.commit()
                return
            }
            let rows = try notificationRows(conn, listing)
            if seed {
                for r in rows { print("[\(r[0] ?? "")] " + seedLine(r)) }
                return
            }
            output.print(columns: notificationColumns, rows: rows, numeric: ["condition_id", "lat", "lon", "accuracy_m"])
        }
    }
}

/// Says on standard error when run `runId` counted notifications and the
/// catalog holds none of them (judged with --no-store-notifications, or
/// deleted since): the empty listing is then not the run's, and nothing
/// else would say so.
private func warnIfNotStored(run runId: Int64, _ conn: Connection) throws {
    let counted = try conn.scalar("SELECT notifications FROM gf_runs WHERE run_id = ?", [.integer(runId)]).int64 ?? 0
    guard counted > 0 else { return }
    let stored = try conn.scalar("SELECT EXISTS (SELECT 1 FROM gf_notification_rows WHERE run_id = ?)", [.integer(runId)]).int64 ?? 0
    guard stored == 0 else { return }
    warn("run \(runId) counted \(counted) notifications and the catalog holds none of them "
         + "(judged with --no-store-notifications, or deleted since)")
}

struct Reset: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Clear stay and notification state, for one subject or all (the seed's resetGeoFenceStatus).",
        discussion: "Removes last known fixes, stays and the days a suppression reads (gf_last_notified shows none for the subject); the notification log stays unless --notifications.")
    @Argument(help: "The database file.") var db: String
    @Option(help: "Only this subject.") var subject: String?
    @Flag(help: "Also delete the notification log (and explanations).") var notifications = false
    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let n = try conn.transaction { () -> Int in
                // Only a given filter is written: `?1 IS NULL OR subject_id = ?1`
                // would read every row of every table for one subject.
                let v: [SQLiteValue] = subject.map { [.text($0)] } ?? []
                let filter = subject == nil ? "" : " WHERE subject_id = ?1"
                let count = Int(try conn.scalar("SELECT count(*) FROM gf_subject_state" + filter, v).int64 ?? 0)
                // One subject: the gf_subjects view's trigger removes its record and its gf_inside rows
                // (gf_inside is keyed by area first); every subject: both tables emptied.
                let state = subject == nil ? ["gf_subject_state", "gf_inside"] : ["gf_subjects"]
                for table in state + (notifications ? ["gf_explain"] : []) {
                    try conn.query("DELETE FROM \(table)" + filter, v)
                }
                // The stored rows, by the subject's key (with them, gf_last_notified's days of
                // conditions without a suppression: the view reads those from them).
                // Their ids are not handed out again (the floor raised first): a consumer's cursor stays valid.
                if notifications {
                    try NotificationIds.raiseFloor(conn)
                    try conn.query("DELETE FROM gf_notification_rows"
                                   + (subject == nil ? "" : " WHERE subject_key = (SELECT subject_key FROM gf_subject_keys WHERE subject_id = ?1)"), v)
                }
                return count
            }
            // A mistyped id resets nothing: say so, the reset itself is not an error (running it twice is fine).
            let none = subject.map { n == 0 ? " (no subject \(Echo.quoted($0)) has state here; ids are compared as written)" : "" } ?? ""
            print("reset \(counted(n, "subject"))" + (notifications ? " and their notifications" : "") + none)
        }
    }
}
