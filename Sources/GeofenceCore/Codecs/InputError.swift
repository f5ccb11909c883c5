/// An error in user input, located as precisely as the input allows:
/// file, feature index or row, the area or condition id, and the field.
public struct InputError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var file: String?
    /// Zero-based feature index in a FeatureCollection, or one-based data row of a CSV.
    public var item: String?
    public var id: String?
    public var field: String?

    public init(_ message: String, file: String? = nil, item: String? = nil, id: String? = nil, field: String? = nil) {
        self.message = message; self.file = file; self.item = item; self.id = id; self.field = field
    }

    public var description: String {
        var parts: [String] = []
        if let file, !file.isEmpty { parts.append(file) }
        if let item { parts.append(item) }
        if let id { parts.append("id \(Echo.quoted(id))") }
        if let field { parts.append(field) }
        return parts.isEmpty ? message : parts.joined(separator: ", ") + ": " + message
    }

    public func located(file: String? = nil, item: String? = nil, id: String? = nil) -> InputError {
        var e = self
        if e.file == nil { e.file = file }
        if e.item == nil { e.item = item }
        if e.id == nil { e.id = id }
        return e
    }
}
