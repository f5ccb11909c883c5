import ArgumentParser
import GeofenceCore
import GeofenceSQL

/// How events (notifications, explanations) are written for other programs
/// (`judge --out`, `notifications --format`, `explain --format`). Every kind
/// of event is written by the functions of this file, told its columns by
/// `EventColumns`: one CSV, JSON and GeoJSON writer for all of them.
enum EventFormat: String, ExpressibleByArgument, CaseIterable {
    /// A header row, then one row per event: its kind's columns.
    case csv
    /// One JSON object per line and event: the same fields (numbers as
    /// numbers) and `geometry`, the fix's position as a GeoJSON Point.
    case ndjson
    /// A GeoJSON FeatureCollection: one Feature per event, its Point
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

    /// What goes before the first event: CSV's header, a FeatureCollection's opening.
    func header(_ columns: EventColumns) -> String {
        switch self {
        case .csv: columns.names.joined(separator: ",") + "\n"
        case .geojson: #"{"type":"FeatureCollection","features":["#
        case .ndjson, .geojsonseq: ""
        }
    }

    /// What goes after the last: a FeatureCollection's closing.
    var footer: String { self == .geojson ? "\n]}\n" : "" }

    /// What each event's text begins with: in a FeatureCollection,
    /// the comma and line break that separate it from the one before, which
    /// the first one written leaves out (`withoutFirstSeparator`).
    var separator: [UInt8] { self == .geojson ? Array(",\n".utf8) : [] }
}

/// The members of one event row (its kind's `columns`),
/// `"subject_id":…,"ts":…,…`, without braces: the numeric columns as
/// numbers in their stored text when that is a JSON number and finite (else
/// as strings: a hand-edited `0x10` or `007` would not be JSON), NULL as
/// null. Returns the position when lat and lon read as numbers. Written as
/// bytes, not through a `JSONValue` tree and a String per line: a run can
/// write millions.
private func appendMembers(_ row: [String?], _ columns: EventColumns, to out: inout [UInt8]) -> (lon: Double, lat: Double)? {
    var lat: Double?, lon: Double?
    for (i, (key, cell)) in zip(columns.keys, row).enumerated() {
        out += key
        guard let cell else { out += "null".utf8; continue }
        if columns.numeric[i] {
            // The plain decimals of stored coordinates without strtod (the same Double, bit for bit).
            let d = isJSONNumber(cell) ? DecimalText.parse(cell) ?? Double(cell) : nil
            if i == columns.lat { lat = d } else if i == columns.lon { lon = d }
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

/// The NDJSON line of one event row, with its newline: its members,
/// then `geometry`, a GeoJSON Point [lon, lat] when both read as numbers,
/// else null.
private func appendJSONLine(_ row: [String?], _ columns: EventColumns, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "{"))
    let position = appendMembers(row, columns, to: &out)
    out += #","geometry":"#.utf8
    appendPoint(position, to: &out)
    out += "}\n".utf8
}

/// One event as a GeoJSON Feature (no separator, no line end):
/// `{"type":"Feature","geometry":<Point or null>,"properties":{<members>}}`.
private func appendFeature(_ row: [String?], _ columns: EventColumns, to out: inout [UInt8]) {
    var properties: [UInt8] = [UInt8(ascii: "{")]
    let position = appendMembers(row, columns, to: &properties)
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

/// Writes the notifications `listing` selects (a run's, a subject's, since
/// a time) in `format` and closes the output; the caller commits it.
func writeNotifications(_ conn: Connection, _ listing: NotificationListing, format: EventFormat, to output: OutputFile) throws {
    let rows = try listing.statement(conn)
    defer { rows.reset() }
    try writeEvents(rows, .notifications, format: format, to: output)
}

/// Writes every row of `rows` (a SELECT of `columns`, in order) as events
/// in `format` and closes the output; the caller commits it and resets the
/// statement. Row by row from the statement into the file's buffer: a run
/// can write millions, which need not all be held as strings first.
func writeEvents(_ rows: Statement, _ columns: EventColumns, format: EventFormat, to output: OutputFile) throws {
    try output.write(format.header(columns))
    var cells = [String?](repeating: nil, count: columns.names.count)
    // Lines gather in a buffer written 64 KB at a time; a fix that notifies
    // several areas gives rows with the same time, converted once.
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 17)
    var lastStored: SQLiteValue?, lastTime: String?
    var first = true
    while try rows.step() {
        for i in cells.indices where i != columns.time { cells[i] = columns.field(i, rows.value(i)) }
        let stored = rows.value(columns.time)
        if stored != lastStored { (lastStored, lastTime) = (stored, columns.field(columns.time, stored)) }
        cells[columns.time] = lastTime
        if !first { buffer += format.separator }
        first = false
        appendEventLine(cells, columns, format: format, to: &buffer)
        if buffer.count >= 1 << 16 { try output.write(bytes: buffer); buffer.removeAll(keepingCapacity: true) }
    }
    try output.write(bytes: buffer)
    try output.write(format.footer)
    try output.close()
}

/// One event's text in `format`, its cells as `columns.field` gives them:
/// a CSV line, an NDJSON line, a Feature (a line of its own in GeoJSONSeq;
/// in a FeatureCollection the caller puts `format.separator` before every
/// one but the first).
func appendEventLine(_ cells: [String?], _ columns: EventColumns, format: EventFormat, to buffer: inout [UInt8]) {
    switch format {
    case .csv:
        for i in cells.indices {
            if i > 0 { buffer.append(0x2C) }
            buffer += csvField(cells[i] ?? "").utf8
        }
        buffer.append(0x0A)
    case .ndjson:
        appendJSONLine(cells, columns, to: &buffer)
    case .geojson:
        appendFeature(cells, columns, to: &buffer)
    case .geojsonseq:
        appendFeature(cells, columns, to: &buffer)
        buffer.append(0x0A)
    }
}

/// `-` names standard input or output in `--fixes` and `--out`.
let standardStream = "-"
