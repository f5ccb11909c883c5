import ArgumentParser
import GeofenceCore
import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the areas as a GeoJSON FeatureCollection; importing it gives the same catalog.")
    @Argument(help: "The database file.") var db: String
    @Option(name: .shortAndLong, help: "Output file; default: standard output.") var out: String?

    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let areas = try AreaStore(conn).all()
            guard let f = out.map({ fopen($0, "wb") }) ?? stdout else { throw InputError("cannot write", file: out) }
            defer { if out != nil { fclose(f) } }
            var head = "{\"type\":\"FeatureCollection\""
            if let t = try Settings(conn).get("import_updated_at") { head += ",\"updated_at\":"; JSONValue.writeString(t, to: &head) }
            fputs(head + ",\"features\":[\n", f)
            for (i, a) in areas.enumerated() {
                fputs((i > 0 ? ",\n" : "") + GeoJSONArea.feature(for: a).serialized, f)
            }
            fputs("\n]}\n", f)
            if let out { warn("exported \(areas.count) areas to \(out)") }
        }
    }
}
