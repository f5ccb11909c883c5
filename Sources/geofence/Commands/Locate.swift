import ArgumentParser
import GeofenceCore
import GeofenceSQL
@preconcurrency import Glibc

struct Locate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Which areas contain a position: the verdict for every area near it.",
        discussion: """
            Candidates come from the spatial index (widened by the error circle); each gets \
            gf_area_contains: inside, outside or undecided, with the area's thresholds and confidence.
            """)
    @Argument(help: "The database file.") var db: String
    @Option(parsing: .unconditional, help: "Latitude in degrees.", transform: decimalOption) var lat: Double?
    @Option(parsing: .unconditional, help: "Longitude in degrees.", transform: decimalOption) var lon: Double?
    @Option(parsing: .unconditional, help: "Horizontal accuracy (CEP68 radius) in metres.", transform: decimalOption) var accuracy: Double = 0
    @Option(parsing: .unconditional, help: "CEP confidence p in [0, 1) for every area, instead of each area's own.", transform: decimalOption) var confidence: Double?
    @Option(help: "Locate every fix of this CSV or NDJSON file (lat and lon; accuracy_m if given, else 0; other columns ignored) instead of one position; writes CSV rows row,area_id,verdict for every inside or undecided pair.")
    var fixes: String?
    @Option(help: ArgumentHelp(fixesFormatHelp)) var fixesFormat: FixSources.FileFormat?
    @OptionGroup var feedColumns: FeedColumnOptions
    @Option(help: "With --fixes: write the pairs to this file (CSV: a name of another format, such as .json, is refused) instead of standard output.") var out: String?
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let c = confidence, !(c >= 0 && c < 1) { throw ValidationError("--confidence must be in [0, 1), got \(c)") }
        if fixes == nil && (lat == nil || lon == nil) { throw ValidationError("give --lat and --lon, or --fixes FILE") }
        if fixes != nil && (lat != nil || lon != nil) { throw ValidationError("--fixes replaces --lat/--lon: give one or the other") }
        if fixes == nil && fixesFormat != nil { throw ValidationError("--fixes-format is the format of --fixes: give --fixes FILE") }
        if fixes == nil && (feedColumns.columns != nil || feedColumns.accuracyM != nil) {
            throw ValidationError("--columns and --accuracy-m describe the rows of --fixes: give --fixes FILE (one position takes --accuracy)")
        }
        try requireOutputName(out)
        _ = try Self.outNames.resolve(out: out, given: nil)
    }

    /// What the pairs are written as: CSV only.
    enum PairsFormat: String { case csv }
    /// What --out's name may say: the one format the pairs are written in.
    static let outNames = OutputFormatNames<PairsFormat>(command: "locate --fixes", formats: [(.csv, ["csv"])], fallback: .csv)

    func run() throws {
        HugePages.adviseForThisProcess()
        try reporting {
            if let fixes { return try locateBatch(try openCatalog(db), fixes) }
            // Checked (as `nearest` checks them) before the catalog is opened.
            let p = try checkedPosition(lat: lat ?? .nan, lon: lon ?? .nan)
            _ = try checkedAccuracy(accuracy)
            let conn = try openCatalog(db)
            let rows = try AreaQueries.locate(conn, lat: p.lat, lon: p.lon, accuracy: accuracy, confidence: confidence)
            output.print(columns: ["area_id", "name", "verdict", "distance_m", "inside_probability"],
                         rows: rows.map { r in [r.areaId, r.name, r.verdict, String(format2: r.distanceM), String(format4: r.probability)] },
                         numeric: ["distance_m", "inside_probability"])
        }
    }
}

extension Locate {
    /// The batch form: pairs as CSV, to standard output or to the --out file
    /// (see `OutputFile`: never over the database, all or nothing).
    func locateBatch(_ conn: Connection, _ path: String) throws {
        let output = try OutputFile(out == standardStream ? nil : out, database: conn)
        // Each chunk's pairs are formatted and written on a thread of their
        // own while the next chunk is located (`ConsumingThread`).
        // The header goes out with the first chunk's lines (or alone at the
        // end): a batch that fails before any chunk writes nothing.
        var csv = PairsCSV(), header = PairsCSV.header
        func write(_ lines: [UInt8]) throws {
            if !header.isEmpty { try output.write(bytes: header); header = [] }
            try output.write(bytes: lines)
        }
        // In slices of 64k pairs: a chunk's pairs at a million fences would be tens of MB of text at once.
        let writer = ConsumingThread<BatchLocate.Pairs> { pairs in
            for start in stride(from: 0, to: pairs.all.count, by: 1 << 16) {
                try write(csv.lines(pairs, start..<min(start + 1 << 16, pairs.all.count)))
            }
        }
        let feed = try feedColumns.feed()
        let inputs = try fixRows(path, format: fixesFormat, required: ["lat", "lon"], feed: feed, each: BatchLocate.Input.init)
        let report = try BatchLocate.run(conn, inputs: inputs, confidence: confidence, beforeChunk: writer.check, emit: writer.give)
        try writer.finish()
        try write([])
        try output.commit()
        // Notes first: the summary stays the last line (the Python door reads it there).
        if let (row, why) = report.firstInvalid {
            warn("invalid fixes: \(report.invalid) of \(report.fixes), not located; the first: row \(row): \(feed.describe(why))")
        }
        if report.withoutAccuracy > 0 {
            warn("\(counted(report.withoutAccuracy, "fix", plural: "fixes")) had no accuracy (no \(Echo.quoted(feed.column(.accuracy))) column or key): "
                 + "located as exact positions (accuracy 0), so no pair of theirs is undecided; name your accuracy column with "
                 + "--columns accuracy_m=COLUMN, or give every fix one with --accuracy-m M")
        }
        fputs("located \(counted(report.fixes, "fix", plural: "fixes")) (\(report.invalid) invalid): \(counted(report.pairs, "pair")); "
              + "catalog loaded in \(String(format4: report.loadSeconds)) s, fixes located in \(String(format4: report.locateSeconds)) s\n", stderr)
    }
}

extension String {
    init(format2 v: Double) { self = String((v * 100).rounded() / 100) }
    init(format4 v: Double) { self = String((v * 10_000).rounded() / 10_000) }
}
