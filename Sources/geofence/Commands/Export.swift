import ArgumentParser
import GeofenceCore
import GeofenceSQL

extension CircleForm: ExpressibleByArgument {}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the areas as GeoJSON, GeoJSONSeq or any vector format GDAL writes (GeoPackage, FlatGeobuf, Shapefile, …); importing it gives the same catalog.")
    @Argument(help: "The database file.") var db: String
    @Option(name: .shortAndLong, help: "Output file (- or none: standard output).") var out: String?
    @Option(help: ArgumentHelp("""
        geojson (a FeatureCollection), geojsonseq (one feature per line), or the short name of any GDAL vector \
        driver that creates files (GPKG, FlatGeobuf, "ESRI Shapefile", GML, KML, SQLite, …; ogrinfo --formats \
        lists them), written by GDAL's ogr2ogr as layer 'areas' (needs --out). Default: by --out's name (.geojson, \
        .json: geojson; .geojsonl, .geojsons, .geojsonseq, .ndjson, .jsonl: geojsonseq; .gpkg: GPKG; .fgb: \
        FlatGeobuf; .shp: ESRI Shapefile; .gml: GML; .kml: KML; .sqlite: SQLite; a name of another format, such as \
        .csv, is refused unless --format names its driver), else geojson.
        """, valueName: "format"))
    var format: ExportFormat?
    @Option(help: ArgumentHelp("""
        How a circle is written: polygons (a Polygon tracing the geodesic circle, with circle_lat, circle_lon and \
        circle_radius_m holding the exact centre and radius; the default for GDAL formats, which have no circles) \
        or points (a Point with radius_m, the engine's own form; the default for geojson and geojsonseq). Import \
        reads either back as the same circle.
        """, valueName: "polygons|points"))
    var circles: CircleForm?

    /// What --out's name may say: the formats export writes, by extension.
    static let outNames = OutputFormatNames<ExportFormat>(
        command: "export",
        formats: [(.geojson, ["geojson", "json"]), (.geojsonseq, ["geojsonl", "geojsons", "geojsonseq", "ndjson", "jsonl"]),
                  (.gpkg, ["gpkg"]), (.flatGeobuf, ["fgb"]), (.shapefile, ["shp"]), (.gml, ["gml"]), (.kml, ["kml"]),
                  (.sqlite, ["sqlite"])],
        fallback: .geojson,
        othersByFormat: "give --format the name of the GDAL driver that writes it (ogrinfo --formats lists them)")
    /// The format written (validate() has refused a name of another).
    var outFormat: ExportFormat { (try? Self.outNames.resolve(out: out, given: format)) ?? format ?? .geojson }

    func validate() throws {
        try requireOutputName(out)
        let format = try Self.outNames.resolve(out: out, given: format)
        if format.gdalDriver != nil && (out == nil || out == standardStream) {
            throw ValidationError("--format \(format.optionText) is written to a file by GDAL's ogr2ogr: give --out FILE")
        }
    }

    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let areas = try AreaStore(conn).all()
            let format = outFormat
            let updatedAt = try Settings(conn).get("import_updated_at")
            if format.gdalDriver != nil, let out {
                let writer = try GDALExport(format: format, out: out)
                let features = try ExportFeatures(areas, circles: circles ?? .polygons, format: format)
                try writer.write(features.collection(updatedAt: updatedAt), database: conn, promoteToMulti: features.promoteToMulti)
                warn("exported \(counted(areas.count, "area")) to \(out)")
                return
            }
            let circles = self.circles ?? .points
            let output = try OutputFile(out == standardStream ? nil : out, database: conn)
            if format == .geojsonseq {
                for a in areas { try output.write(GeoJSONArea.feature(for: a, circles: circles).serialized + "\n") }
                try output.commit()
                if let out { warn("exported \(counted(areas.count, "area")) to \(out)") }
                return
            }
            var head = "{\"type\":\"FeatureCollection\""
            if let t = updatedAt { head += ",\"updated_at\":"; JSONValue.writeString(t, to: &head) }
            try output.write(head + ",\"features\":[\n")
            for (i, a) in areas.enumerated() {
                try output.write((i > 0 ? ",\n" : "") + GeoJSONArea.feature(for: a, circles: circles).serialized)
            }
            try output.write("\n]}\n")
            try output.commit()
            if let out { warn("exported \(counted(areas.count, "area")) to \(out)") }
        }
    }
}
