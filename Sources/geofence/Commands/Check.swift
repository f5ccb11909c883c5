import ArgumentParser
import GeofenceCore
import GeofenceSQL

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Judge one location of one subject and print its notifications (the seed's checkLocation).",
        discussion: "Example: geofence check fences.db --subject phone-1 --lat 35.715 --lon 139.773 --accuracy 10 --time 2026-11-20T09:00:00+09:00 --seed")

    @Argument(help: "The database file.") var db: String
    @Option(help: "The subject (device or person).") var subject: String
    @Option(parsing: .unconditional, help: "Latitude in degrees.", transform: decimalOption) var lat: Double
    @Option(parsing: .unconditional, help: "Longitude in degrees.", transform: decimalOption) var lon: Double
    @Option(parsing: .unconditional, help: "Horizontal accuracy (CEP68 radius) in metres.", transform: decimalOption) var accuracy: Double
    @Option(parsing: .unconditional, help: "Time of the fix: ISO 8601 with an offset (without one: in the catalog's default_timezone once set), or a number in --time-unit.") var time: String
    @OptionGroup var timeUnit: TimeUnitOption
    @Flag(help: "Print in the seed sample app's layout.") var seed = false
    @Flag(help: "Record why the fix did not count or a transition did not notify (gf_explain).") var explain = false
    @OptionGroup var output: OutputOptions

    func run() throws {
        try reporting {
            // The options as a fix, checked first so that an error names the option.
            _ = try checkedPosition(lat: lat, lon: lon)
            _ = try checkedAccuracy(accuracy)
            // A time without an offset waits for the catalog, whose zone may read it.
            if !Timestamp.lacksOnlyOffset(time) {
                var unit = FixFeed.standard
                unit.timeUnit = timeUnit.timeUnit
                do { _ = try unit.time(time) } catch { throw InputError("\(error)", field: "--time") }
            }
            let conn = try openCatalog(db)
            var feed = FixFeed.standard
            try timeUnit.apply(to: &feed, catalog: conn)
            let ts: Timestamp
            do { ts = try feed.time(time) } catch { throw InputError("\(error)", field: "--time") }
            var row = Judgement.Row(subjectId: subject, ts: nil, lat: lat, lon: lon, accuracy: accuracy)
            row.parsedTs = ts
            let (report, notifications) = try conn.transaction { try Judgement(conn, explain: explain).check(row) }
            let rows = try notificationRows(conn, NotificationListing(of: report))
            if seed {
                for r in rows { print(seedLine(r)) }
                if notifications.isEmpty { print(report.counters.stale > 0 ? "(stale fix: not judged)" : "(no notifications)") }
                return
            }
            output.print(columns: notificationColumns, rows: rows,
                         numeric: ["condition_id", "lat", "lon", "accuracy_m"])
            if report.counters.stale > 0 { warn(try staleFixReason(conn, subject: subject)) }
        }
    }
}

/// `*** 通知条件ID:[1] エリアID:[1] 内外判定:[内] *** 日時:[...] 緯度:[...] 経度:[...] 誤差:[...]`
/// from a notification row (columns as `notificationColumns`); DWELL prints 滞在.
func seedLine(_ r: [String?]) -> String {
    let side = ["IN": "内", "OUT": "外", "DWELL": "滞在"][r[4] ?? ""] ?? ""
    return "*** 通知条件ID:[\(r[3] ?? "")] エリアID:[\(r[2] ?? "")] 内外判定:[\(side)] *** 日時:[\(r[1] ?? "")] "
        + "緯度:[\(r[5] ?? "")] 経度:[\(r[6] ?? "")] 誤差:[\(r[7] ?? "")]"
}

/// Why `check` printed no notifications for a stale fix (on stderr, so the table stays a table).
func staleFixReason(_ conn: Connection, subject: String) throws -> String {
    let last = try conn.scalar("SELECT last_ts FROM gf_subjects WHERE subject_id = ?", [.text(subject)]).string
    let when = last.flatMap { try? Timestamp.parse($0) }.map { " (\($0.iso8601))" } ?? ""
    return "stale fix: not after the last judged fix of subject \(Echo.quoted(subject))\(when); not judged: no state or notification changed (gf_runs records the check, its fix counted as stale)"
}
