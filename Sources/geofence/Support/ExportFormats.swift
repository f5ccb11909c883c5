import ArgumentParser

/// What `geofence export --format` writes: the engine's own GeoJSON writers
/// (`geojson`, `geojsonseq`), or any GDAL vector driver that creates files,
/// by its short name as `ogrinfo --formats` lists it (`GPKG`, `FlatGeobuf`,
/// `"ESRI Shapefile"`, `GML`, `KML`, `SQLite`, …). Names compare without
/// regard to case, as GDAL's own lookup does; `gpkg` is GPKG. Whether a
/// driver name is real is GDAL's to say, when the export runs (`GDALExport`).
struct ExportFormat: RawRepresentable, ExpressibleByArgument, Equatable, Sendable {
    let rawValue: String

    init(rawValue: String) {
        switch rawValue.lowercased() {
        case "geojson": self.rawValue = "geojson"
        case "geojsonseq": self.rawValue = "geojsonseq"
        case "gpkg": self.rawValue = "GPKG"
        default: self.rawValue = rawValue
        }
    }

    init?(argument: String) {
        guard !argument.isEmpty else { return nil }
        self.init(rawValue: argument)
    }

    static func == (l: ExportFormat, r: ExportFormat) -> Bool { l.rawValue.lowercased() == r.rawValue.lowercased() }

    /// One FeatureCollection (with the set's `updated_at` member).
    static let geojson = ExportFormat(rawValue: "geojson")
    /// GeoJSON text sequence: one Feature per line (RFC 8142 without the RS
    /// byte, as GDAL's GeoJSONSeq and NDJSON tools read it); it has no place
    /// for `updated_at`.
    static let geojsonseq = ExportFormat(rawValue: "geojsonseq")
    static let gpkg = ExportFormat(rawValue: "GPKG")
    static let flatGeobuf = ExportFormat(rawValue: "FlatGeobuf")
    static let shapefile = ExportFormat(rawValue: "ESRI Shapefile")
    static let gml = ExportFormat(rawValue: "GML")
    static let kml = ExportFormat(rawValue: "KML")
    static let sqlite = ExportFormat(rawValue: "SQLite")

    /// The GDAL driver that writes this format, nil for the engine's own GeoJSON.
    var gdalDriver: String? { self == .geojson || self == .geojsonseq ? nil : rawValue }

    /// Whether a layer of this format holds one geometry type only: polygons
    /// and multipolygons go together there (promoted to multi when both
    /// occur), but points do not.
    var holdsOneGeometryType: Bool { self == .shapefile || self == .flatGeobuf }

    /// How the format is named in messages: its name as --format takes it.
    var optionText: String { rawValue.contains(" ") ? "\"\(rawValue)\"" : rawValue }
}
