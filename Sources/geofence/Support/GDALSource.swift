import GeofenceCore
import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Any vector source GDAL reads (GeoPackage, Shapefile, FlatGeobuf, KML,
/// GML, …), read in this process through GDAL's C API (`GDALLibrary`) and
/// handed to the importer one GeoJSON Feature value at a time, so a GDAL
/// source meets exactly the checks, errors and all-or-nothing transaction of
/// a GeoJSON file.
///
/// Nothing from the file is ever an argument to anything: layers are listed
/// and chosen by their exact names. Geometry is taken as ISO WKB, so each
/// coordinate is the exact double the file holds; it is reprojected to WGS 84
/// longitude/latitude only when the layer's coordinate reference system is
/// not that already (then not touched at all). A NULL or unset column is a
/// missing property, as a GeoJSON feature that leaves it out.
final class GDALSource {
    typealias Handle = GDALLibrary.Handle

    let layerName: String
    /// `layer 'NAME'`, as messages name a feature's layer: quoted once, not per feature.
    private lazy var layerItem = "layer \(Echo.name(layerName))"
    private let gdal: GDALLibrary
    private let path: String
    private let dataset: Handle
    private let layer: Handle
    private let transformation: Handle?
    private let fields: GDALFields
    /// How many features the whole layer gives, when known without reading
    /// them (GDAL's count, or a Shapefile's own): reading fewer is an error.
    private let expected: Int?
    private var read = 0
    private var lastFid: Int64?

    /// Whether `path` goes through GDAL: a layer was asked for, or it is not a
    /// GeoJSON FeatureCollection. `.geojson` and `.json` files are read by the
    /// engine itself (its errors name line and column); so is any other file
    /// that starts with `{`, unless its name says it is a GeoJSON text
    /// sequence (`.geojsonl`, `.geojsons`, `.geojsonseq`, `.ndjson`, `.jsonl`).
    static func isNeeded(path: String, layer: String?) -> Bool {
        if layer != nil { return true }
        var st = stat()
        guard stat(path, &st) == 0 else { return false }  // the engine's reader names the missing file
        if (st.st_mode & S_IFMT) == S_IFDIR { return true }  // a Shapefile folder, a FileGDB
        let lower = path.lowercased()
        // GeoJSON, and GeoJSON sequences: the engine's reader.
        if lower.hasSuffix(".geojson") || lower.hasSuffix(".json") || FeatureCollectionReader.namesSequence(path) { return false }
        guard let f = fopen(path, "rb") else { return false }
        defer { fclose(f) }
        var head = [UInt8](repeating: 0, count: 4096)
        let n = head.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
        var i = 0
        if n >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF { i = 3 }
        while i < n, [0x20, 0x09, 0x0A, 0x0D].contains(head[i]) { i += 1 }
        // Empty, or JSON: the engine's reader (and its error messages).
        return i < n && head[i] != UInt8(ascii: "{")
    }

    /// Opens `path` read-only and chooses its `layer` (when nil, its only
    /// layer; a source of several needs `--layer`). `sourceCRS` (any CRS
    /// GDAL understands: `EPSG:2263`, WKT, PROJ text) stands for the layer's
    /// own, which a source without one needs. Any failure GDAL raises while
    /// opening the dataset and the layer (a VRT's source that cannot be
    /// opened) is an error, and so is a Shapefile whose .shx and .dbf
    /// disagree on how many features it has.
    init(path: String, layer wanted: String?, sourceCRS: String?) throws {
        do { gdal = try GDALLibrary.shared() } catch { throw InputError(error.description, file: path) }
        self.path = path
        let mark = GDALErrors.mark()
        guard let dataset = gdal.openEx(path, GDALLibrary.openVector | GDALLibrary.openReadOnly | GDALLibrary.openVerboseError,
                                        nil, nil, nil) else {
            throw InputError("GDAL cannot read it" + Self.because(GDALErrors.failures(since: mark)), file: path)
        }
        self.dataset = dataset
        do {
            let layers = Self.layers(of: dataset, gdal)
            let chosen = try Self.choose(wanted, among: layers, path: path)
            layer = chosen.handle
            layerName = chosen.name
            let opening = "GDAL failed opening layer \(Echo.name(chosen.name))"
            do {
                var columns = try GDALFields(layer: chosen.handle, gdal)
                if let driver = gdal.driverOf(dataset), GDALLibrary.string(gdal.driverShortName(driver)) == "ESRI Shapefile" {
                    columns.restoreShapefileNames()
                }
                fields = columns
            } catch let e as InputError {
                // GDAL's own failure, when it raised one, is the cause.
                try Self.failIfGDALFailed(since: mark, opening, path: path)
                throw InputError("layer \(Echo.name(chosen.name)): " + e.message, file: path)
            }
            let count = gdal.featureCount(chosen.handle, 0)   // 0: only when GDAL knows it without reading every feature
            gdal.resetReading(chosen.handle)
            try Self.failIfGDALFailed(since: mark, opening, path: path)
            expected = try Self.expectedCount(of: chosen, in: dataset, gdal, gdalCount: count, path: path)
            transformation = try Self.transformation(for: chosen, sourceCRS: sourceCRS, gdal, path: path)
        } catch {
            gdal.close(dataset)
            throw error
        }
    }

    deinit {
        if let transformation { gdal.destroyTransformation(transformation) }
        gdal.close(dataset)
    }

    /// Throws `what`, with GDAL's messages, when GDAL raised a failure after `mark`.
    private static func failIfGDALFailed(since mark: Int, _ what: String, path: String) throws {
        if let failure = GDALErrors.failures(since: mark) { throw InputError(what + ": " + failure, file: path) }
    }

    /// How many features the layer gives when read whole: a Shapefile's
    /// records less its deleted ones (after refusing a .shx and .dbf that
    /// disagree), else GDAL's count when it knows it without reading (-1 when not).
    private static func expectedCount(of layer: Layer, in dataset: Handle, _ gdal: GDALLibrary, gdalCount: Int64, path: String) throws -> Int? {
        if let driver = gdal.driverOf(dataset), GDALLibrary.string(gdal.driverShortName(driver)) == "ESRI Shapefile",
           let counts = ShapefileCounts.read(layer: layer.name, files: gdal.files(of: dataset)) {
            if let mismatch = counts.mismatch(layer: layer.name) { throw InputError(mismatch, file: path) }
            return counts.features
        }
        return gdalCount >= 0 ? Int(gdalCount) : nil
    }

    /// The stream the importer reads, with the members of the GeoJSON
    /// collection GDAL kept with the layer (a GeoPackage made from one keeps
    /// its `updated_at`).
    func stream() -> ImportStream {
        ImportStream(layer: layerName, members: nativeMembers(), count: expected) { [self] in try next() }
    }

    /// The next feature as GeoJSON and its fid, nil at the end of the layer.
    /// Any failure GDAL raises while reading is an error: at the end (a file
    /// cut short), or in a feature (a geometry GDAL cannot decode, which it
    /// hands on as none). So is an end before the count the layer gave.
    func next() throws -> (feature: JSONValue, fid: Int64)? {
        let mark = GDALErrors.mark()
        guard let feature = gdal.nextFeature(layer) else {
            let after = lastFid.map { " after fid \($0)" } ?? ""
            try Self.failIfGDALFailed(since: mark, "GDAL failed reading layer \(Echo.name(layerName))\(after)", path: path)
            if let expected, read < expected {
                throw InputError("GDAL read \(read) of the \(expected) features layer \(Echo.name(layerName)) says it has\(after): "
                                 + "the file is cut short or damaged", file: path)
            }
            return nil
        }
        defer { gdal.destroyFeature(feature) }
        read += 1
        let fid = gdal.featureId(feature)
        lastFid = fid
        // The message's parts are made only for a feature that fails.
        let item = { "\(self.layerItem), fid \(fid)" }
        let (properties, unreadable) = fields.properties(of: feature)
        let readable = { JSONValue.object([("type", .string("Feature")), ("properties", .object(properties))]) }
        if let unreadable { throw ImportStream.FeatureError(unreadable.located(file: path, item: item()), readable: readable()) }
        if let failure = GDALErrors.failures(since: mark) {
            // GDAL handed the feature on, but failed on part of it: its geometry when it has none.
            let e = gdal.geometryOf(feature) == nil ? InputError("GDAL cannot read it: " + failure, file: path, item: item(), field: "geometry")
                                                    : InputError("GDAL failed reading it: " + failure, file: path, item: item())
            throw ImportStream.FeatureError(e, readable: readable())
        }
        do {
            let geometry = try self.geometry(of: feature)
            return (.object([("type", .string("Feature")), ("properties", .object(properties)), ("geometry", geometry)]), fid)
        } catch let e as InputError {
            throw ImportStream.FeatureError(e.located(file: path, item: item()), readable: readable())
        }
    }

    /// The feature's geometry as GeoJSON with the file's exact doubles,
    /// reprojected when the layer needs it; JSON null when it has none. A
    /// geometry with arcs is refused: made of straight lines it would be
    /// another shape, and how close is the user's choice, not a default of
    /// GDAL's (its 4° steps put a 1° circle's edge 68 m in). A curve type
    /// holding only straight parts (a CurvePolygon of LineStrings) is made
    /// linear, which keeps its points.
    private func geometry(of feature: Handle) throws -> JSONValue {
        guard let original = gdal.geometryOf(feature) else { return .null }
        var owned: Handle?
        defer { if let owned { gdal.destroyGeometry(owned) } }
        if gdal.hasCurveGeometry(original, 1) != 0 {
            throw InputError("a \(GDALLibrary.string(gdal.geometryName(original))) with arcs, which only an approximation of "
                             + "straight lines can stand for: linearise the file first, choosing how close, e.g. "
                             + "ogr2ogr -nlt CONVERT_TO_LINEAR --config OGR_ARC_STEPSIZE 0.01 linear.gpkg \(Echo.shellWord(path)) "
                             + "(steps of 0.01° keep arcs of up to 2,000 km radius within 1 cm)", field: "geometry")
        }
        if gdal.hasCurveGeometry(original, 0) != 0 {
            owned = gdal.linearGeometry(original, 0, nil)
        }
        if let transformation {
            if owned == nil { owned = gdal.cloneGeometry(original) }
            let mark = GDALErrors.mark()
            guard let g = owned, gdal.transform(g, transformation) == 0 else {
                throw InputError("cannot reproject it to WGS 84 longitude/latitude" + Self.because(GDALErrors.failures(since: mark)),
                                 field: "geometry")
            }
        }
        let g = owned ?? original
        var wkb = [UInt8](repeating: 0, count: gdal.wkbSize(g))
        let mark = GDALErrors.mark()
        guard gdal.exportToIsoWkb(g, GDALLibrary.littleEndian, &wkb) == 0 else {
            throw InputError("GDAL cannot write its geometry as WKB" + Self.because(GDALErrors.failures(since: mark)), field: "geometry")
        }
        do {
            return try wkb.withUnsafeBytes { try WKBGeometry.geoJSON($0) }
        } catch {
            throw InputError("GDAL wrote its geometry as malformed WKB", field: "geometry")
        }
    }

    /// The collection members GDAL keeps as the layer's native GeoJSON data
    /// (`updated_at` and any other foreign member), or none.
    private func nativeMembers() -> [(String, JSONValue)] {
        guard let type = gdal.metadataItem(layer, "NATIVE_MEDIA_TYPE", "NATIVE_DATA"),
              String(cString: type) == "application/vnd.geo+json",
              let text = gdal.metadataItem(layer, "NATIVE_DATA", "NATIVE_DATA"),
              case .object(let members)? = try? JSONReader.parse(String(cString: text)) else { return [] }
        return members.filter { $0.0 != "type" && $0.0 != "features" }
    }

    /// ": message", or nothing when GDAL gave none.
    static func because(_ message: String?) -> String {
        message.map { ": " + $0 } ?? ""
    }

    /// A layer of the dataset, by its exact name.
    struct Layer {
        var name: String
        /// The name's own bytes, which need not be UTF-8 (shown escaped in lists).
        var bytes: [UInt8]
        var handle: Handle
    }

    private static func layers(of dataset: Handle, _ gdal: GDALLibrary) -> [Layer] {
        (0..<max(0, gdal.layerCount(dataset))).compactMap { i in
            guard let h = gdal.layerAt(dataset, i) else { return nil }
            let bytes = GDALLibrary.bytes(gdal.layerName(h))
            return Layer(name: String(decoding: bytes, as: UTF8.self), bytes: bytes, handle: h)
        }
    }

    /// The layer named `wanted`, or the only one.
    private static func choose(_ wanted: String?, among layers: [Layer], path: String) throws -> Layer {
        let list = layers.map { Echo.name(bytes: $0.bytes) }.joined(separator: ", ")
        if let wanted {
            guard let l = layers.first(where: { $0.name == wanted }) else {
                throw InputError("it has no layer \(Echo.name(wanted))"
                                 + (layers.isEmpty ? "" : " (its layers: \(list))"), file: path, field: "--layer")
            }
            return l
        }
        guard layers.count == 1 else {
            if layers.isEmpty { throw InputError("GDAL finds no layer in it", file: path) }
            throw InputError("it has \(layers.count) layers (\(list)): choose one with --layer", file: path)
        }
        return layers[0]
    }

    /// The transformation from the layer's CRS (or `sourceCRS`) to WGS 84
    /// longitude/latitude, both in traditional GIS order (x = longitude);
    /// nil when the layer is in WGS 84 longitude/latitude already, so its
    /// doubles are taken as they are.
    private static func transformation(for layer: Layer, sourceCRS: String?, _ gdal: GDALLibrary, path: String) throws -> Handle? {
        guard let target = gdal.newSpatialRef(nil) else { throw InputError("GDAL cannot make a spatial reference", file: path) }
        defer { gdal.destroySpatialRef(target) }
        let mark = GDALErrors.mark()
        guard gdal.setFromUserInput(target, "EPSG:4326") == 0 else {
            throw InputError("GDAL does not know EPSG:4326 (is its proj.db installed? Debian: apt-get install proj-data)"
                             + because(GDALErrors.failures(since: mark)), file: path)
        }
        let source: Handle
        if let sourceCRS {
            guard let s = gdal.newSpatialRef(nil) else { throw InputError("GDAL cannot make a spatial reference", file: path) }
            guard gdal.setFromUserInput(s, sourceCRS) == 0 else {
                gdal.destroySpatialRef(s)
                throw InputError("GDAL does not know this coordinate reference system" + because(GDALErrors.failures(since: mark)), field: "--source-crs")
            }
            source = s
        } else {
            guard let own = gdal.layerSpatialRef(layer.handle), let s = gdal.cloneSpatialRef(own) else {
                throw InputError("layer \(Echo.name(layer.name)) has no coordinate reference system (a Shapefile without its .prj file?): "
                                 + "if its coordinates are longitude and latitude in WGS 84, import it with --source-crs EPSG:4326; "
                                 + "else name the CRS they are in, e.g. --source-crs EPSG:2263", file: path)
            }
            source = s
        }
        defer { gdal.destroySpatialRef(source) }
        gdal.setAxisMappingStrategy(source, GDALLibrary.traditionalGISOrder)
        gdal.setAxisMappingStrategy(target, GDALLibrary.traditionalGISOrder)
        if gdal.isSame(source, target) != 0 { return nil }
        guard let t = gdal.newTransformation(source, target) else {
            throw InputError("GDAL cannot reproject layer \(Echo.name(layer.name)) to WGS 84 longitude/latitude"
                             + because(GDALErrors.failures(since: mark)), file: path)
        }
        return t
    }
}
