import ArgumentParser
import GeofenceCore
import GeofenceSQL

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the areas as GeoJSON (or GeoJSONSeq, GeoPackage); importing it gives the same catalog.")
    @Argument(help: "The database file.") var db: String
    @Option(name: .shortAndLong, help: "Output file (- or none: standard output).") var out: String?
    @Option(help: "geojson (a FeatureCollection), geojsonseq (one feature per line), gpkg (a GeoPackage, layer 'areas', needs --out and GDAL's ogr2ogr). Default: by --out's name (.geojson, .json: geojson; .geojsonl, .geojsons, .ndjson, .jsonl: geojsonseq; .gpkg: gpkg; a name of another format, such as .csv, is refused), else geojson.")
    var format: ExportFormat?

    /// What --out's name may say: the formats export writes, by extension.
    static let outNames = OutputFormatNames<ExportFormat>(
        command: "export",
        formats: [(.geojson, ["geojson", "json"]), (.geojsonseq, ["geojsonl", "geojsons", "geojsonseq", "ndjson", "jsonl"]), (.gpkg, ["gpkg"])],
        fallback: .geojson)
    /// The format written (validate() has refused a name of another).
    var outFormat: ExportFormat { (try? Self.outNames.resolve(out: out, given: format)) ?? format ?? .geojson }

    func validate() throws {
        if format == .gpkg && (out == nil || out == "-") { throw ValidationError("--format gpkg needs --out FILE") }
        try requireOutputName(out)
        _ = try Self.outNames.resolve(out: out, given: format)
    }

    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let areas = try AreaStore(conn).all()
            let format = outFormat
            if format == .gpkg, let out {
                var text = "{\"type\":\"FeatureCollection\""
                if let t = try Settings(conn).get("import_updated_at") { text += ",\"updated_at\":"; JSONValue.writeString(t, to: &text) }
                text += ",\"features\":[\n" + areas.map { GeoJSONArea.feature(for: $0).serialized }.joined(separator: ",\n") + "\n]}\n"
                try writeGeoPackage(text, to: out, database: conn)
                warn("exported \(counted(areas.count, "area")) to \(out)")
                return
            }
            let output = try OutputFile(out == standardStream ? nil : out, database: conn)
            if format == .geojsonseq {
                for a in areas { try output.write(GeoJSONArea.feature(for: a).serialized + "\n") }
                try output.commit()
                if let out { warn("exported \(counted(areas.count, "area")) to \(out)") }
                return
            }
            var head = "{\"type\":\"FeatureCollection\""
            if let t = try Settings(conn).get("import_updated_at") { head += ",\"updated_at\":"; JSONValue.writeString(t, to: &head) }
            try output.write(head + ",\"features\":[\n")
            for (i, a) in areas.enumerated() {
                try output.write((i > 0 ? ",\n" : "") + GeoJSONArea.feature(for: a).serialized)
            }
            try output.write("\n]}\n")
            try output.commit()
            if let out { warn("exported \(counted(areas.count, "area")) to \(out)") }
        }
    }
}
