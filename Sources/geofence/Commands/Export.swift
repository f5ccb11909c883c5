import ArgumentParser
import GeofenceCore
import GeofenceSQL

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the areas as a GeoJSON FeatureCollection; importing it gives the same catalog.")
    @Argument(help: "The database file.") var db: String
    @Option(name: .shortAndLong, help: "Output file; default: standard output.") var out: String?

    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let output = try OutputFile(out, database: conn)
            let areas = try AreaStore(conn).all()
            var head = "{\"type\":\"FeatureCollection\""
            if let t = try Settings(conn).get("import_updated_at") { head += ",\"updated_at\":"; JSONValue.writeString(t, to: &head) }
            try output.write(head + ",\"features\":[\n")
            for (i, a) in areas.enumerated() {
                try output.write((i > 0 ? ",\n" : "") + GeoJSONArea.feature(for: a).serialized)
            }
            try output.write("\n]}\n")
            try output.commit()
            if let out { warn("exported \(areas.count) areas to \(out)") }
        }
    }
}
