import GeofenceCore

/// Features that reach the importer from another reader than the engine's
/// GeoJSON one (GDAL reading a GeoPackage, Shapefile, FlatGeobuf…), as the
/// GeoJSON Feature values that reader would have produced, one at a time.
///
/// Errors still name the user's file, with the layer and the feature's own
/// fid (the number GDAL, QGIS and `ogrinfo -fid` give it); the importer's
/// rules (all or nothing, the first bad feature reported) are the same.
public struct ImportStream {
    /// The layer being read, named in every error.
    public var layer: String
    /// The collection-level members the source keeps (GDAL keeps a GeoJSON
    /// collection's `updated_at` in a GeoPackage), as a collection's would be.
    public var members: [(String, JSONValue)]
    /// How many features the layer has, when the source knows without reading them all (for progress).
    public var count: Int?
    /// The next feature and its fid, or nil at the end of the layer. Throws
    /// the source's own error (an `InputError` naming the layer and fid, or a
    /// `FeatureError` when part of the feature could be read), so a source
    /// that fails part way is never imported as if it were whole.
    /// Called on the importer's parsing thread only, one call at a time.
    public var next: () throws -> (feature: JSONValue, fid: Int64)?

    public init(layer: String, members: [(String, JSONValue)], count: Int?,
                next: @escaping () throws -> (feature: JSONValue, fid: Int64)?) {
        self.layer = layer; self.members = members; self.count = count; self.next = next
    }

    /// How a feature is named in errors: "feature N" (0-based) of a GeoJSON
    /// file, "layer 'L', fid N" of a GDAL source (the layer's name as
    /// `Echo.name` quotes it, as every message about a layer does).
    static func item(_ index: Int, layer: String?) -> String {
        layer.map { "layer \(Echo.name($0)), fid \(index)" } ?? "feature \(index)"
    }

    /// An error in one feature thrown by `next`, with what could be read of
    /// the feature (its readable properties, as a GeoJSON Feature), so the
    /// importer names its id as it does in every other error about a feature.
    public struct FeatureError: Error {
        public var error: InputError
        public var readable: JSONValue
        public init(_ error: InputError, readable: JSONValue) { self.error = error; self.readable = readable }
    }
}
