import ArgumentParser
import GeofenceCore
import GeofenceSQL

/// `geofence state`: the subjects' judgement state. `show` (the default, so
/// `geofence state DB` lists it as it always has), and the portable state
/// records out of a catalog and into one (`export`, `import`: docs/state.md).
struct State: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show, export and import the subjects' stay state.",
        discussion: """
            `geofence state DB` shows the state (the subcommand show). export writes each subject's \
            state record (docs/subject-record.md) as JSON lines; import puts such lines into a \
            catalog, so that judging goes on elsewhere where it stopped (docs/state.md).
            """,
        subcommands: [Show.self, Export.self, Import.self],
        defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        /// A stored cell as people read it: the times (last_ts, entered_at) in
        /// their short form, as every listing shows them (`EventColumns.field`).
        static let columns = ["subject_id", "last_ts", "last_lat", "last_lon", "last_accuracy_m", "area_id", "state",
                              "in_streak", "out_streak", "entered_at"]
        static let times: Set = ["last_ts", "entered_at"]
        static func field(_ i: Int, _ v: SQLiteValue) -> String? {
            guard !v.isNull else { return nil }
            return times.contains(columns[i]) ? v.string.flatMap { try? Timestamp.parse($0).iso8601 } : v.string
        }

        static let configuration = CommandConfiguration(
            abstract: "Show stay state: each subject's last judged fix and its stays (INSIDE, or an entry being confirmed).")
        @Argument(help: "The database file.") var db: String
        @Option(help: "Only this subject.") var subject: String?
        @OptionGroup var output: OutputOptions
        func run() throws {
            try reporting {
                let conn = try openCatalog(db)
                // Only a given filter is written (`?1 IS NULL OR …` keeps SQLite from the subject's index).
                let rows = try conn.query("""
                    SELECT s.subject_id, s.last_ts, s.last_lat, s.last_lon, s.last_accuracy_m,
                           t.area_id, t.state, t.in_streak, t.out_streak, t.entered_at
                    FROM gf_subjects AS s LEFT JOIN gf_stays AS t ON t.subject_id = s.subject_id
                    \(subject == nil ? "" : "WHERE s.subject_id = ?1")
                    ORDER BY s.subject_id, t.area_id
                    """, subject.map { [.text($0)] } ?? []).map { row in row.indices.map { Self.field($0, row[$0]) } }
                output.print(columns: Self.columns, rows: rows,
                             numeric: ["last_lat", "last_lon", "last_accuracy_m", "in_streak", "out_streak"])
            }
        }
    }
}
