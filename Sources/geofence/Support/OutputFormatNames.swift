import ArgumentParser
import GeofenceCore

/// The format an output file is written in, as its name says it.
///
///     geofence judge DB --fixes f.csv --out notes.ndjson     # NDJSON: the name says so
///     geofence judge DB --fixes f.csv --out notes.gpkg       # refused: judge writes CSV, NDJSON or GeoJSON
///     geofence export DB --out areas.gpkg                    # a GeoPackage
///     geofence export DB --format geojson --out areas.gpkg   # refused: the option and the name disagree
///
/// Why: a file named for one format and holding another (CSV in
/// notes.gpkg, GeoJSON text in areas.gpkg) fails only later, in the
/// program that opens it, far from the command that wrote it. So a name
/// whose extension is a known format picks that format when --format is not
/// given, if the command writes it; a known format the command does not
/// write is refused, naming the extensions it does; and a --format that the
/// extension contradicts is refused, naming both. A name with no extension,
/// or one that names no known format (.txt, .out, .db), is written in the
/// command's default, or as --format says; so is standard output (`-`). A
/// compressed name (.gz, .zip, …) is refused: nothing is written compressed.
struct OutputFormatNames<Format: RawRepresentable & Equatable & Sendable>: Sendable where Format.RawValue == String {
    /// The command, as the user typed it (`judge`, `export`, `locate --fixes`).
    let command: String
    /// Each format the command writes, with the extensions that name it (lower case, no dot).
    let formats: [(format: Format, extensions: [String])]
    /// What is written when neither --format nor the name says.
    let fallback: Format
    /// Whether --format may name a format outside `formats` (export's GDAL
    /// drivers): such a format is written under any name but one that says
    /// another format of the table, and a refusal says that --format may.
    var othersByFormat: String? = nil

    /// Extensions of formats people hand files around in → the format's name, for messages.
    static var knownKinds: [String: String] {
        ["csv": "CSV", "tsv": "TSV", "ndjson": "NDJSON", "jsonl": "NDJSON", "json": "JSON", "geojson": "GeoJSON",
         "geojsonl": "GeoJSONSeq", "geojsons": "GeoJSONSeq", "geojsonseq": "GeoJSONSeq", "gpkg": "GeoPackage",
         "shp": "Shapefile", "fgb": "FlatGeobuf", "kml": "KML", "gml": "GML", "gpx": "GPX", "parquet": "Parquet",
         "xlsx": "Excel", "xls": "Excel"]
    }

    /// Extensions of compressed files: refused, since nothing is written compressed.
    static var compressed: Set<String> { ["gz", "bz2", "xz", "zst", "zip", "7z", "lz4", "z"] }

    /// The extension of `path`'s last component, lower case, if it has one.
    static func fileExtension(_ path: String) -> String? {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex, name.index(after: dot) != name.endIndex else { return nil }
        return String(name[name.index(after: dot)...]).lowercased()
    }

    /// The format `out` is written in, given `--format` as `given`: what
    /// --format says, else what the name says, else the fallback. Throws
    /// when the name is of a known format the command does not write, or
    /// of another format than --format's. `out` nil or `-`: standard output.
    func resolve(out: String?, given: Format?) throws -> Format {
        if let out, out != standardStream, let ext = Self.fileExtension(out), Self.compressed.contains(ext) {
            // Written plain under a compressed name, it fails in the program that opens it.
            throw ValidationError("--out \(out) names a compressed file (.\(ext)), and \(command) writes it uncompressed: "
                                  + "write to standard output and compress it (--out - | gzip > FILE), or drop the .\(ext)")
        }
        let ext = out.flatMap { $0 == standardStream ? nil : Self.fileExtension($0) }
        let named = ext.flatMap { ext in formats.first { $0.extensions.contains(ext) }?.format }
        guard let out, let ext, let kind = Self.knownKinds[ext] ?? named?.rawValue else { return given ?? fallback }
        if let given, othersByFormat != nil, !formats.contains(where: { $0.format == given }), named == nil { return given }
        if let given, let named, given != named {
            throw ValidationError("--format \(given.rawValue) and --out \(out) disagree: the name says \(kind) (--format \(named.rawValue)); "
                                  + "give the file " + (extensionList(given).isEmpty ? "another name" : "a name of its format (\(extensionList(given)))")
                                  + ", or leave --format out")
        }
        if let named { return named }
        let what = given.map { "--format \($0.rawValue) writes \(extensionList($0)), but " } ?? ""
        throw ValidationError("\(what)--out \(out) names a \(kind) file, which \(command) does not write: \(command) writes "
                              + formats.map { "\($0.format.rawValue) (\(extensionList($0.format)))" }.joined(separator: ", ")
                              + "; name the file for one of these" + (othersByFormat.map { ", or " + $0 } ?? ""))
    }

    /// `.a, .b` for a format's extensions.
    private func extensionList(_ format: Format) -> String {
        (formats.first { $0.format == format }?.extensions ?? []).map { "." + $0 }.joined(separator: ", ")
    }
}
