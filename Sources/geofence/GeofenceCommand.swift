import ArgumentParser
import GeofenceHost
import GeofenceSQL
@preconcurrency import Glibc

@main
struct GeofenceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geofence",
        abstract: "A geofencing engine inside SQLite: fence catalogs, accuracy-aware containment, judgement.",
        discussion: """
            Every command takes the database file first (after the subcommand of a group: `geofence areas list DB`). The SQL functions are in docs/sql.md.

            Exit status: 0 done; 1 bad input (a file, record or option value: the message names it; \
            nothing was changed); 2 a database problem (missing, not a SQLite database, not a catalog, \
            a newer schema, or read-only for a command that writes); 3 busy: another process kept \
            the database locked for writing past the \(Database.busyTimeoutSeconds) s busy timeout (nothing was \
            changed); 64 a usage error (unknown or missing option).

            `judge --out FILE.csv` and `notifications --format csv` write the columns subject_id, ts, \
            area_id, condition_id, transition (IN, OUT or DWELL), lat, lon, accuracy_m, one row per \
            notification in canonical order; --format ndjson one JSON object per line with the same \
            fields and a GeoJSON Point geometry.
            """,
        version: GeofenceVersion.string,
        subcommands: [
            Init.self, Import.self, Areas.self, Conditions.self, Clear.self, SettingsCommand.self,
            Export.self, Locate.self, Nearest.self, Regions.self, Positioning.self, Check.self, Judge.self, Notifications.self, Explain.self, Prune.self, State.self, Reset.self, Version.self,
        ]
    )

    static func main() {
        if let why = ArgumentBytes.firstNotUTF8() {
            fail("error: \(why): ids, times and file names are read as UTF-8; nothing was changed", code: 1)
        }
        SignalEnding.install()
        // A file past `ulimit -f` is a write error said in words (EFBIG), not a silent death by SIGXFSZ.
        signal(SIGXFSZ, SIG_IGN)
        main(nil)
    }
}
