import ArgumentParser
import GeofenceCore
import GeofenceSQL

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import areas from a GeoJSON FeatureCollection or any vector source GDAL reads, all or nothing.",
        discussion: """
            Each feature becomes an area: Polygon and MultiPolygon as they are, a Point with a \
            radius_m property as a circle, and a Polygon with circle_lat, circle_lon and \
            circle_radius_m properties (as export writes a circle for GIS tools) as that exact \
            circle, once its polygon is checked to still trace it. Properties named like the area fields (area_id, group_id, \
            in_accuracy_max_m, in_confirm_count, out_accuracy_max_m, out_confirm_count, valid_from, \
            valid_until, confidence, timezone, name) set them; the rest are kept as free properties. \
            The file is streamed, and the whole import is one transaction.

            A GeoJSON sequence (one Feature a line: .geojsonl, .geojsons, .geojsonseq, .ndjson, \
            .jsonl, .ldjson) is read the same way. Any other vector source GDAL reads (GeoPackage, \
            Shapefile, FlatGeobuf, KML, …) is read through the GDAL library (Debian package \
            gdal-bin or libgdal32) with the same checks: each coordinate is the exact number in the \
            file, reprojected to WGS 84 longitude/latitude only when the source is in another \
            coordinate reference system. --layer names the layer of a source that has several. \
            There a NULL column is a missing property.
            """)

    @Argument(help: "The database file.") var db: String
    @Argument(help: "The GeoJSON FeatureCollection file, or any vector source GDAL reads.") var file: String
    @Option(parsing: .unconditional, help: "The layer to read from a GDAL source with several (GeoPackage tables, …), by its exact name.") var layer: String?
    @Option(name: .customLong("source-crs"),
            help: "The coordinate reference system of a GDAL source that has none (a Shapefile without its .prj), or to use instead of its own: EPSG:4326, EPSG:2263, WKT, …")
    var sourceCrs: String?
    @Option(help: "Group id: areas get ids <group>#<area_id>.") var group: String?
    @Option(name: .customLong("id-field"), parsing: .unconditional,
            help: "The property (column) holding each area's id, for a source without area_id: its value is the id, and a feature without one is refused.")
    var idField: String?
    @Option(name: .customLong("group-field"), parsing: .unconditional,
            help: "The property (column) holding each area's group id, instead of group_id.")
    var groupField: String?
    @Flag(help: "Replace the whole catalog (areas and conditions) with this set.") var replace = false
    @Flag(help: "Replace areas whose id already exists instead of failing (their conditions stay; the summary says how many were replaced). Within the file, the last feature with an id wins.") var upsert = false
    @Flag(help: "Add an IN and an OUT condition for every imported area, numbered on from the highest id.")
    var withDefaultConditions = false
    @Flag(help: "Repair self-intersecting polygons with SpatiaLite's MakeValid (and list them) instead of failing.")
    var makeValid = false
    @Option(help: "The set's update time (ISO 8601 with offset); overrides the collection's updated_at member.")
    var updatedAt: String?
    @Flag(help: "Import even if the set is older than the one imported before.") var force = false

    func validate() throws {
        if group == "" { throw ValidationError("--group needs a group id (an empty one would make ids #A)") }
        if idField == "" { throw ValidationError("--id-field needs the name of the property holding the area ids") }
        if groupField == "" { throw ValidationError("--group-field needs the name of the property holding the group ids") }
        if group != nil && groupField != nil {
            throw ValidationError("give --group (one group for every area) or --group-field (each area's group from a property), not both")
        }
    }

    func run() throws {
        HugePages.adviseForThisProcess()
        try reporting {
            let conn = try openCatalog(db)
            // One transaction writes the whole catalog: with a small cache
            // SQLite spills its pages into the WAL before the commit, and every
            // page read after that searches the WAL's index. 256 MiB keeps
            // most of a large import out of it (benchmarks/results.md).
            try conn.execute("PRAGMA cache_size = -262144")
            var o = AreaImporter.Options()
            o.group = group; o.idField = idField; o.groupField = groupField; o.replace = replace; o.upsert = upsert; o.defaultConditions = withDefaultConditions
            o.makeValid = makeValid; o.force = force
            if let updatedAt {
                do { o.updatedAt = try Timestamp.parse(updatedAt) } catch let e as Timestamp.ParseError {
                    throw InputError(e.description, field: "--updated-at")
                }
            }
            // A file's progress is in bytes; a GDAL layer's in features (its size on disk says little).
            var bar = ProgressBar(label: "importing", unit: "MB", divisor: 1_000_000)
            if GDALSource.isNeeded(path: file, layer: layer) {
                o.stream = try GDALSource(path: file, layer: layer, sourceCRS: sourceCrs).stream()
                bar = ProgressBar(label: "importing", unit: "features")
            } else if sourceCrs != nil {
                throw InputError("--source-crs is for a source GDAL reads; GeoJSON is always WGS 84 longitude/latitude", file: file)
            }
            let r = try AreaImporter(conn).run(path: file, options: o, progress: bar.update)
            bar.finish()
            for (item, id, reason) in r.repaired { warn("repaired \(item) (id \(Echo.quoted(id))): \(reason)") }
            for name in r.repairedTriggers {
                warn("repaired trigger \(name) on gf_areas: it was missing, or its stored SQL was not SpatiaLite's definition; re-created from that definition")
            }
            var line = "imported \(counted(r.imported, "area")) (\(r.polygons) polygonal, \(counted(r.circles, "circle")))"
            if r.conditions > 0 { line += " and \(counted(r.conditions, "condition"))" }
            if r.replacedInCatalog > 0 {
                line += "; \(r.replacedInCatalog) of them replaced \(r.replacedInCatalog == 1 ? "an area" : "areas") already in the catalog"
            }
            if r.replacedInFile > 0 {
                line += "; \(counted(r.replacedInFile, "feature")) of the file replaced an earlier one with the same id"
            }
            if replace { line += ", replacing the previous catalog" }
            if let t = r.updatedAt { line += "; set updated at \(t.iso8601)" }
            print(line)
        }
    }
}
