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

    /// What a file's name says, as for --fixes: NDJSON for a name ending in
    /// .ndjson or .jsonl, else CSV (standard output, `-`, is CSV).
    init(named path: String) { self = FixSources.namesNDJSON(path) ? .ndjson : .csv }
}

/// The NDJSON line of one notification row (columns as
/// `notificationColumns`), appended with its newline: the columns in order,
/// condition_id, lat, lon and accuracy_m as numbers in their stored text when
/// that is a JSON number and finite (else as strings: a hand-edited `0x10`
/// or `007` would not be JSON), NULL as null; then
/// `geometry`, a GeoJSON Point [lon, lat] when both read as numbers, else null.
/// (lat and lon are columns 5 and 6.) Written as bytes, not through a
/// `JSONValue` tree and a String per line: a run can write millions.
func appendNotificationJSONLine(_ row: [String?], to out: inout [UInt8]) {
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
    if let lat, let lon {
        out += #","geometry":{"type":"Point","coordinates":["#.utf8
        out += JSONValue.numberText(lon).utf8
        out.append(UInt8(ascii: ","))
        out += JSONValue.numberText(lat).utf8
        out += "]}}\n".utf8
    } else {
        out += ",\"geometry\":null}\n".utf8
    }
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

/// Each column's opening, `{"subject_id":` then `,"ts":` and so on.
private let notificationJSONKeys: [[UInt8]] = notificationColumns.enumerated().map { i, name in
    var key: [UInt8] = [i == 0 ? UInt8(ascii: "{") : UInt8(ascii: ",")]
    JSONValue.appendString(name, to: &key)
    return key + [UInt8(ascii: ":")]
}

/// Which columns are written as JSON numbers when their text reads as one.
private let notificationJSONNumeric = notificationColumns.map { ["condition_id", "lat", "lon", "accuracy_m"].contains($0) }

/// Writes the notifications `listing` selects (a run's, a subject's, since
/// a time) in `format` and closes the output; the caller commits it. Row by row from the statement into the file's buffer: a run
/// can write millions, which need not all be held as strings first.
func writeNotifications(_ conn: Connection, _ listing: NotificationListing, format: EventFormat, to output: OutputFile) throws {
    try output.write(notificationHeader(format))
    let rows = try listing.statement(conn)
    defer { rows.reset() }
    var cells = [String?](repeating: nil, count: notificationColumns.count)
    // Lines gather in a buffer written 64 KB at a time; a fix that notifies
    // several areas gives rows with the same time, converted once.
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 17)
    var lastStored: SQLiteValue?, lastTime: String?
    while try rows.step() {
        for i in cells.indices where i != 1 { cells[i] = notificationField(i, rows.value(i)) }
        let stored = rows.value(1)
        if stored != lastStored { (lastStored, lastTime) = (stored, notificationField(1, stored)) }
        cells[1] = lastTime
        appendNotificationLine(cells, format: format, to: &buffer)
        if buffer.count >= 1 << 16 { try output.write(bytes: buffer); buffer.removeAll(keepingCapacity: true) }
    }
    try output.write(bytes: buffer)
    try output.close()
}

/// One notification's line in `format`, its cells as `notificationField` gives them.
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
    }
}

/// The CSV header line, or nothing for NDJSON.
func notificationHeader(_ format: EventFormat) -> String {
    format == .csv ? notificationColumns.joined(separator: ",") + "\n" : ""
}

/// `-` names standard input or output in `--fixes` and `--out`.
let standardStream = "-"
