import ArgumentParser
import GeofenceCore
import GeofenceSQL

struct Locate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Which areas contain a position: the verdict for every area near it.",
        discussion: """
            Candidates come from the spatial index (widened by the error circle); each gets \
            gf_area_contains: inside, outside or undecided, with the area's thresholds and confidence.
            """)
    @Argument(help: "The database file.") var db: String
    @Option(help: "Latitude in degrees.") var lat: Double
    @Option(help: "Longitude in degrees.") var lon: Double
    @Option(help: "Horizontal accuracy (CEP68 radius) in metres.") var accuracy: Double = 0
    @Option(help: "CEP confidence p in [0, 1) for every area, instead of each area's own.") var confidence: Double?
    @OptionGroup var output: OutputOptions

    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let rows = try AreaQueries.locate(conn, lat: lat, lon: lon, accuracy: accuracy, confidence: confidence)
            output.print(columns: ["area_id", "name", "verdict", "distance_m", "inside_probability"],
                         rows: rows.map { r in [r.areaId, r.name, r.verdict, String(format2: r.distanceM), String(format4: r.probability)] },
                         numeric: ["distance_m", "inside_probability"])
        }
    }
}

extension String {
    init(format2 v: Double) { self = String((v * 100).rounded() / 100) }
    init(format4 v: Double) { self = String((v * 10_000).rounded() / 10_000) }
}
