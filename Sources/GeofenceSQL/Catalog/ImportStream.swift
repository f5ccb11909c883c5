import GeofenceCore

/// Features that reach the importer as GeoJSON from another program (GDAL's
/// ogr2ogr reading a GeoPackage, Shapefile, FlatGeobuf, GeoJSONSeq…), rather
/// than from the GeoJSON file named on the command line.
///
/// Errors still name the user's file, and the layer; the importer's rules
/// (all or nothing, the first bad feature reported) are the same.
public struct ImportStream {
    /// Where the GeoJSON is read from (a pipe, as /dev/fd/N).
    public var path: String
    /// The layer being read, named in every error.
    public var layer: String
    /// Called on the parsing thread when the stream has ended (`malformed`:
    /// it ended in malformed GeoJSON, which a failing producer would leave):
    /// throws the producer's own error if it failed, so a truncated stream is
    /// never imported as if it were the whole layer.
    public var finish: (_ malformed: Bool) throws -> Void

    public init(path: String, layer: String, finish: @escaping (_ malformed: Bool) throws -> Void) {
        self.path = path; self.layer = layer; self.finish = finish
    }

    /// A table gives every feature every column, NULL where the feature has
    /// no value, while GeoJSON can leave a property out. So from a table a
    /// NULL column is the same as a missing property: no free property of
    /// that name, and an area field unset (for the area fields a JSON null
    /// already means unset).
    static func droppingNullProperties(_ feature: JSONValue) -> JSONValue {
        guard case .object(var members) = feature,
              let i = members.firstIndex(where: { $0.0 == "properties" }),
              case .object(let props) = members[i].1 else { return feature }
        members[i].1 = .object(props.filter { $0.1 != .null })
        return .object(members)
    }

    /// How a feature is named in errors: "feature N" of a GeoJSON file, "layer 'L', feature N" of a GDAL source.
    static func item(_ index: Int, layer: String?) -> String {
        layer.map { "layer '\($0)', feature \(index)" } ?? "feature \(index)"
    }
}
