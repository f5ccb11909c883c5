import ArgumentParser
import GeofenceCore
import GeofenceSQL

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Judge one location of one subject and print its notifications (the seed's checkLocation).",
        discussion: "Example: geofence check fences.db --subject phone-1 --lat 35.715 --lon 139.773 --accuracy 10 --time 2026-11-20T09:00:00+09:00 --seed")

    @Argument(help: "The database file.") var db: String
    @Option(help: "The subject (device or person).") var subject: String
    @Option(help: "Latitude in degrees.") var lat: Double
    @Option(help: "Longitude in degrees.") var lon: Double
    @Option(help: "Horizontal accuracy (CEP68 radius) in metres.") var accuracy: Double
    @Option(help: "Time of the fix: ISO 8601 with an offset, or Unix seconds.") var time: String
    @Flag(help: "Print in the seed sample app's layout.") var seed = false
    @Flag(help: "Record why the fix did not count or a transition did not notify (gf_explain).") var explain = false
    @OptionGroup var output: OutputOptions

    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let (report, notifications) = try conn.transaction {
                try Judgement(conn, explain: explain).check(Judgement.Row(subjectId: subject, ts: time, lat: lat, lon: lon, accuracy: accuracy))
            }
            if seed {
                for n in notifications { print(seedLine(n)) }
                if notifications.isEmpty { print(report.counters.stale > 0 ? "(stale fix: not judged)" : "(no notifications)") }
                return
            }
            output.print(columns: notificationColumns, rows: try notificationRows(conn, run: report.runId),
                         numeric: ["condition_id", "lat", "lon", "accuracy_m"])
        }
    }
}

/// `*** 通知条件ID:[1] エリアID:[1] 内外判定:[内] *** 日時:[...] 緯度:[...] 経度:[...] 誤差:[...]`
func seedLine(_ n: Notification) -> String {
    let side: String
    switch n.transition { case .IN: side = "内"; case .OUT: side = "外"; case .DWELL: side = "滞在" }
    return "*** 通知条件ID:[\(n.conditionId)] エリアID:[\(n.areaId)] 内外判定:[\(side)] *** 日時:[\(n.ts.iso8601)] "
        + "緯度:[\(n.lat)] 経度:[\(n.lon)] 誤差:[\(n.accuracy)]"
}
