import GeofenceCore
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A GDAL layer's columns, and a feature's values of them as GeoJSON
/// properties, as ogr2ogr's GeoJSON writer gives them, except that a real is
/// exact: integers as numbers, reals as the shortest text that reads back as
/// the same double (a 32-bit float column as the shortest for that float),
/// booleans as true/false, a JSON column as its JSON, dates and times as ISO
/// 8601 text (`2024-01-02`, `03:04:05`, `2024-01-02T03:04:05.123+09:00`),
/// lists as arrays, anything else as GDAL's text for it. A NULL or unset
/// column, and a real that is not finite (a NaN some writers store for a
/// missing value), is no property at all: a table gives every feature every
/// column, while GeoJSON leaves out what a feature does not have.
struct GDALFields {
    typealias Handle = GDALLibrary.Handle

    private struct Column {
        var name: String
        var type: Int32
        var subType: Int32
    }

    // OGRFieldType and OGRFieldSubType (ogr_core.h).
    private static let integer: Int32 = 0, integerList: Int32 = 1, real: Int32 = 2, realList: Int32 = 3
    private static let string: Int32 = 4, stringList: Int32 = 5, date: Int32 = 9, time: Int32 = 10
    private static let dateTime: Int32 = 11, integer64: Int32 = 12, integer64List: Int32 = 13
    private static let boolean: Int32 = 1, float32: Int32 = 3, json: Int32 = 4

    private let gdal: GDALLibrary
    private var columns: [Column]

    /// The area fields whose names are longer than a Shapefile column's 10
    /// bytes, by the name GDAL cuts them to there (`in_accurac`, `circle_rad`).
    private static let shapefileNames: [String: String] = Dictionary(
        uniqueKeysWithValues: (AreaDefinition.fieldNames).filter { $0.utf8.count > 10 }.map { (String($0.prefix(10)), $0) })

    /// Gives a Shapefile's columns named as GDAL cuts an area field's name
    /// their full name again, so that a Shapefile export imports back with
    /// its fields (none has the full name: a column cannot be so named
    /// there). A free property's long name stays cut: nothing says what it was.
    mutating func restoreShapefileNames() {
        for i in columns.indices {
            guard let full = Self.shapefileNames[columns[i].name], !columns.contains(where: { $0.name == full }) else { continue }
            columns[i].name = full
        }
    }

    /// The layer's columns. Throws, naming the column by its bytes, for a
    /// name that is not UTF-8 (it would be no property name), and for a name
    /// two columns share: a GeoJSON feature with a member twice is refused,
    /// and a layer must not let the first of two `area_id` columns win.
    init(layer: Handle, _ gdal: GDALLibrary) throws {
        self.gdal = gdal
        guard let definition = gdal.layerDefinition(layer) else { columns = []; return }
        var columns: [Column] = []
        for i in 0..<gdal.fieldCount(definition) {
            guard let f = gdal.fieldDefinition(definition, i) else { continue }
            let bytes = GDALLibrary.bytes(gdal.fieldName(f))
            guard let name = String(validating: bytes, as: UTF8.self) else {
                throw InputError("column \(i + 1) has the name \(Echo.name(bytes: bytes)) (bytes that are not UTF-8 shown as \\xHH), "
                                 + "which is not UTF-8 and so cannot be a property name: rename the column "
                                 + "(a Shapefile names its encoding in a .cpg file beside the .shp, e.g. CP1252)")
            }
            if let first = columns.firstIndex(where: { $0.name == name }) {
                throw InputError("columns \(first + 1) and \(i + 1) are both named \(Echo.name(name)): "
                                 + "a feature's properties must have distinct names (as a GeoJSON feature's members), so rename one")
            }
            columns.append(Column(name: name, type: gdal.fieldType(f), subType: gdal.fieldSubType(f)))
        }
        self.columns = columns
    }

    /// The feature's properties, in column order, and the first column whose
    /// text is not UTF-8 (an error naming it); that column is left out, so
    /// what could be read still names the feature's id.
    func properties(of feature: Handle) -> (readable: [(String, JSONValue)], unreadable: InputError?) {
        var out: [(String, JSONValue)] = []
        var unreadable: InputError?
        out.reserveCapacity(columns.count)
        for (i, column) in columns.enumerated() where gdal.isFieldSetAndNotNull(feature, Int32(i)) != 0 {
            do {
                if let v = try value(feature, Int32(i), column) { out.append((column.name, v)) }
            } catch {
                if unreadable == nil { unreadable = error }
            }
        }
        return (out, unreadable)
    }

    private func value(_ f: Handle, _ i: Int32, _ c: Column) throws(InputError) -> JSONValue? {
        switch c.type {
        case Self.integer, Self.integer64:
            let n = gdal.fieldAsInteger64(f, i)
            return c.subType == Self.boolean ? .bool(n != 0) : .number(String(n))
        case Self.real:
            return number(gdal.fieldAsDouble(f, i), c)
        case Self.date, Self.time, Self.dateTime:
            return .string(dateTime(f, i, type: c.type))
        case Self.integerList, Self.integer64List, Self.realList, Self.stringList:
            return try list(f, i, c)
        default:
            let s = try text(gdal.fieldAsString(f, i), column: c.name)
            if c.subType == Self.json, let parsed = try? JSONReader.parse(s) { return parsed }
            return .string(s)
        }
    }

    /// A real as exact text; nil when it is not finite.
    private func number(_ d: Double, _ c: Column) -> JSONValue? {
        guard d.isFinite else { return nil }
        return .number(c.subType == Self.float32 ? Float(d).description : d.description)
    }

    private func list(_ f: Handle, _ i: Int32, _ c: Column) throws(InputError) -> JSONValue {
        var n: Int32 = 0
        switch c.type {
        case Self.integerList:
            guard let p = gdal.fieldAsIntegerList(f, i, &n) else { return .array([]) }
            return .array(UnsafeBufferPointer(start: p, count: Int(n)).map {
                c.subType == Self.boolean ? .bool($0 != 0) : .number(String($0))
            })
        case Self.integer64List:
            guard let p = gdal.fieldAsInteger64List(f, i, &n) else { return .array([]) }
            return .array(UnsafeBufferPointer(start: p, count: Int(n)).map { .number(String($0)) })
        case Self.realList:
            guard let p = gdal.fieldAsDoubleList(f, i, &n) else { return .array([]) }
            return .array(UnsafeBufferPointer(start: p, count: Int(n)).map { number($0, c) ?? .null })
        default:
            var items: [JSONValue] = []
            guard var p = gdal.fieldAsStringList(f, i) else { return .array([]) }
            while let s = p.pointee {
                items.append(.string(try text(UnsafePointer(s), column: c.name)))
                p += 1
            }
            return .array(items)
        }
    }

    /// A date, time or date-time as ISO 8601 text, as GDAL's own GeoJSON
    /// writer spells it: milliseconds only when there are some, `Z` for UTC,
    /// `±HH:MM` for an offset, nothing for a local or unknown time zone.
    /// Seconds of 59.9995 and more stay in their minute (`59.999`).
    private func dateTime(_ f: Handle, _ i: Int32, type: Int32) -> String {
        var y: Int32 = 0, mo: Int32 = 0, d: Int32 = 0, h: Int32 = 0, mi: Int32 = 0, tz: Int32 = 0
        var s: Float = 0
        _ = gdal.fieldAsDateTime(f, i, &y, &mo, &d, &h, &mi, &s, &tz)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let date = "\(y < 1000 ? String(repeating: "0", count: y < 10 ? 3 : y < 100 ? 2 : 1) : "")\(y)-\(two(mo))-\(two(d))"
        // GDAL holds the seconds as a 32-bit float: rounded to the nearest
        // millisecond they are the file's text again (59.9996 is
        // 59.99960327…), but never rounded up into the next minute, which
        // would be second 60, a leap second the file does not hold.
        var millis = Int((Double(s) * 1000).rounded())
        if s < 60 && millis >= 60_000 { millis = 59_999 }
        var time = "\(two(h)):\(two(mi)):\(two(Int32(millis / 1000)))"
        if millis % 1000 != 0 { time += "." + String(String(1000 + millis % 1000).dropFirst()) }
        if type == Self.date { return date }
        if type == Self.time { return time }
        var zone = ""
        if tz == 100 {
            zone = "Z"
        } else if tz > 1 {
            let minutes = Int32(abs(Int(tz) - 100) * 15)
            zone = (tz > 100 ? "+" : "-") + two(minutes / 60) + ":" + two(minutes % 60)
        }
        return date + "T" + time + zone
    }

    /// A column's text, which must be UTF-8: a Shapefile in another encoding
    /// says which it is in a .cpg file, and without one GDAL passes its bytes
    /// on as they are.
    private func text(_ p: UnsafePointer<CChar>?, column: String) throws(InputError) -> String {
        guard let p else { return "" }
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
        guard let s = String(validating: bytes, as: UTF8.self) else {
            throw InputError("its text \(Echo.quoted(String(decoding: bytes, as: UTF8.self))) is not UTF-8. "
                             + "A Shapefile names its encoding in a .cpg file beside the .shp (one line, e.g. CP1252 or ISO-8859-1); "
                             + "without one, tell GDAL: SHAPE_ENCODING=CP1252 geofence import … (for another format, convert it to UTF-8 first)",
                             field: "properties." + column)
        }
        return s
    }
}
