import ArgumentParser
import GeofenceCore
import GeofenceSQL

/// `geofence explain DB`: lists the reasons `--explain` recorded (table
/// gf_explain), in canonical order (`ExplanationListing`): a table for
/// people, or with `--format` CSV, NDJSON or GeoJSON for other programs,
/// written by the same code as notifications (`writeEvents`), each row's
/// Point the position of the fix it is about.
struct Explain: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the reasons judge --explain and check --explain recorded, in canonical order (run, subject, time, area, condition).",
        discussion: """
            One row per reason a fix did not count or a transition did not notify: run_id, subject_id, ts, area_id, \
            condition_id, kind, reason, lat, lon (the position of the fix it is about; empty, or a null geometry, \
            when that fix had no readable position, and in rows recorded before schema version 6).
            """)
    @Argument(help: "The database file.") var db: String
    @Option(name: .customLong("run"), parsing: .unconditional, help: "Only this run (an error if the catalog has no such run).")
    var runId: Int64?
    @Option(help: "Only this subject.") var subject: String?
    @OptionGroup var output: OutputOptions
    @Option(help: "For pipelines and GIS tools: csv, ndjson (one JSON object per reason, with a GeoJSON Point geometry), geojson (a FeatureCollection of Point Features, the fields as properties) or geojsonseq (those Features one per line).")
    var format: EventFormat?

    func validate() throws {
        if let format, output.json || output.csv {
            throw ValidationError("choose one of --format \(format.rawValue) and \(output.json ? "--json" : "--csv")")
        }
    }

    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            try refuseMissingRun(runId, in: conn, db: db, rowsIn: "gf_explain")
            let rows = try ExplanationListing(run: runId, subject: subject).statement(conn)
            defer { rows.reset() }
            if let format {
                let out = try OutputFile(nil, database: conn)
                try writeEvents(rows, .explanations, format: format, to: out)
                return try out.commit()
            }
            let columns = EventColumns.explanations
            var cells: [[String?]] = []
            while try rows.step() { cells.append(columns.names.indices.map { columns.field($0, rows.value($0)) }) }
            output.print(columns: columns.names, rows: cells, numeric: ["run_id", "condition_id", "lat", "lon"])
        }
    }
}
