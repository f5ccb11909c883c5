import ArgumentParser
import GeofenceCore
import GeofenceSQL

/// How notifications are written for other programs (`judge --out`, `notifications --format`).
enum EventFormat: String, ExpressibleByArgument, CaseIterable {
    /// A header row, then one row per notification: the columns of `notificationColumns`.
    case csv
    /// One JSON object per line and notification: the same fields (numbers as
    /// numbers) and `geometry`, the fix's position as a GeoJSON Point.
    case ndjson
    /// A GeoJSON FeatureCollection: one Feature per notification, its Point
    /// the fix's position, its properties the same fields (GIS tools,
    /// `geopandas.read_file` and `ogr2ogr` open it).
    case geojson
    /// The same Features one per line (GeoJSONSeq, without RFC 8142's RS
    /// byte, as GDAL writes and reads `.geojsonl`).
    case geojsonseq

    /// The extensions that name each format in `--out`.
    static let extensions: [(format: EventFormat, extensions: [String])] = [
        (.csv, ["csv"]), (.ndjson, ["ndjson", "jsonl"]), (.geojson, ["geojson", "json"]), (.geojsonseq, ["geojsonl", "geojsons", "geojsonseq"]),
    ]

    /// What goes before the first notification: CSV's header, a FeatureCollection's opening.
    var header: String {
        switch self {
        case .csv: notificationColumns.joined(separator: ",") + "\n"
        case .geojson: #"{"type":"FeatureCollection","features":["#
        case .ndjson, .geojsonseq: ""
        }
    }

    /// What goes after the last: a FeatureCollection's closing.
    var footer: String { self == .geojson ? "\n]}\n" : "" }

    /// What each notification's text begins with: in a FeatureCollection,
    /// the comma and line break that separate it from the one before, which
    /// the first one written leaves out (`withoutFirstSeparator`).
    var separator: [UInt8] { self == .geojson ? Array(",\n".utf8) : [] }
}

/// The members of one notification row (columns as `notificationColumns`),
/// `"subject_id":…,"ts":…,…`, without braces: condition_id, lat, lon and
/// accuracy_m as numbers in their stored text when that is a JSON number and
/// finite (else as strings: a hand-edited `0x10` or `007` would not be
/// JSON), NULL as null. Returns the position when lat and lon (columns 5
/// and 6) read as numbers. Written as bytes, not through a `JSONValue` tree
/// and a String per line: a run can write millions.
private func appendNotificationMembers(_ row: [String?], to out: inout [UInt8]) -> (lon: Double, lat: Double)? {
    var lat: Double?, lon: Double?
    for (i, (key, cell)) in zip(notificationJSONKeys, row).enumerated() {
        out += key
        guard let cell else { out += "null".utf8; continue }
        if notificationJSONNumeric[i] {
            // The plain decimals of stored coordinates without strtod (the same Double, bit for bit).
            let d = isJSONNumber(cell) ? DecimalText.parse(cell) ?? Double(cell) : nil
            if i == 5 { lat = d } else if i == 6 { lon = d }
            if let d, d.isFinite { out += cell.utf8; continue }
        }
        JSONValue.appendString(cell, to: &out)
    }
    guard let lat, let lon else { return nil }
    return (lon, lat)
}

/// A GeoJSON Point of `position`, or null (also for an infinite coordinate,
/// which JSON cannot write: a table rebuilt by hand may hold one).
private func appendPoint(_ position: (lon: Double, lat: Double)?, to out: inout [UInt8]) {
    guard let position, position.lon.isFinite, position.lat.isFinite else { out += "null".utf8; return }
    out += #"{"type":"Point","coordinates":["#.utf8
    out += JSONValue.numberText(position.lon).utf8
    out.append(UInt8(ascii: ","))
    out += JSONValue.numberText(position.lat).utf8
    out += "]}".utf8
}

/// The NDJSON line of one notification row, with its newline: its members,
/// then `geometry`, a GeoJSON Point [lon, lat] when both read as numbers,
/// else null.
func appendNotificationJSONLine(_ row: [String?], to out: inout [UInt8]) {
    out.append(UInt8(ascii: "{"))
    let position = appendNotificationMembers(row, to: &out)
    out += #","geometry":"#.utf8
    appendPoint(position, to: &out)
    out += "}\n".utf8
}

/// One notification as a GeoJSON Feature (no separator, no line end):
/// `{"type":"Feature","geometry":<Point or null>,"properties":{<members>}}`.
func appendNotificationFeature(_ row: [String?], to out: inout [UInt8]) {
    var properties: [UInt8] = [UInt8(ascii: "{")]
    let position = appendNotificationMembers(row, to: &properties)
    out += #"{"type":"Feature","geometry":"#.utf8
    appendPoint(position, to: &out)
    out += #","properties":"#.utf8
    out += properties
    out += "}}".utf8
}

/// RFC 8259's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(_ text: String) -> Bool {
    var u = text.utf8[...]
    func digits() -> Int {
        let n = u.prefix { $0 >= 0x30 && $0 <= 0x39 }.count
        u = u.dropFirst(n)
        return n
    }
    if u.first == UInt8(ascii: "-") { u = u.dropFirst() }
    if u.first == UInt8(ascii: "0") { u = u.dropFirst() } else if digits() == 0 { return false }
    if u.first == UInt8(ascii: ".") { u = u.dropFirst(); if digits() == 0 { return false } }
    if u.first == UInt8(ascii: "e") || u.first == UInt8(ascii: "E") {
        u = u.dropFirst()
        if u.first == UInt8(ascii: "+") || u.first == UInt8(ascii: "-") { u = u.dropFirst() }
        if digits() == 0 { return false }
    }
    return u.isEmpty
}

/// Each column's opening, `"subject_id":` then `,"ts":` and so on.
private let notificationJSONKeys: [[UInt8]] = notificationColumns.enumerated().map { i, name in
    var key: [UInt8] = i == 0 ? [] : [UInt8(ascii: ",")]
    JSONValue.appendString(name, to: &key)
    return key + [UInt8(ascii: ":")]
}

/// Which columns are written as JSON numbers when their text reads as one.
private let notificationJSONNumeric = notificationColumns.map { ["condition_id", "lat", "lon", "accuracy_m"].contains($0) }

/// Writes the notifications `listing` selects (a run's, a subject's, since
/// a time) in `format` and closes the output; the caller commits it. Row by row from the statement into the file's buffer: a run
/// can write millions, which need not all be held as strings first.
func writeNotifications(_ conn: Connection, _ listing: NotificationListing, format: EventFormat, to output: OutputFile) throws {
    try output.write(format.header)
    let rows = try listing.statement(conn)
    defer { rows.reset() }
    var cells = [String?](repeating: nil, count: notificationColumns.count)
    // Lines gather in a buffer written 64 KB at a time; a fix that notifies
    // several areas gives rows with the same time, converted once.
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 17)
    var lastStored: SQLiteValue?, lastTime: String?
    var first = true
    while try rows.step() {
        for i in cells.indices where i != 1 { cells[i] = notificationField(i, rows.value(i)) }
        let stored = rows.value(1)
        if stored != lastStored { (lastStored, lastTime) = (stored, notificationField(1, stored)) }
        cells[1] = lastTime
        if !first { buffer += format.separator }
        first = false
        appendNotificationLine(cells, format: format, to: &buffer)
        if buffer.count >= 1 << 16 { try output.write(bytes: buffer); buffer.removeAll(keepingCapacity: true) }
    }
    try output.write(bytes: buffer)
    try output.write(format.footer)
    try output.close()
}

/// One notification's text in `format`, its cells as `notificationField`
/// gives them: a CSV line, an NDJSON line, a Feature (a line of its own in
/// GeoJSONSeq; in a FeatureCollection the caller puts `format.separator`
/// before every one but the first).
func appendNotificationLine(_ cells: [String?], format: EventFormat, to buffer: inout [UInt8]) {
    switch format {
    case .csv:
        for i in cells.indices {
            if i > 0 { buffer.append(0x2C) }
            buffer += csvField(cells[i] ?? "").utf8
        }
        buffer.append(0x0A)
    case .ndjson:
        appendNotificationJSONLine(cells, to: &buffer)
    case .geojson:
        appendNotificationFeature(cells, to: &buffer)
    case .geojsonseq:
        appendNotificationFeature(cells, to: &buffer)
        buffer.append(0x0A)
    }
}

/// `-` names standard input or output in `--fixes` and `--out`.
let standardStream = "-"
