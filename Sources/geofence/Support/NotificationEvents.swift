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
}

/// The NDJSON line of one notification row (columns as `notificationColumns`).
func notificationJSONLine(_ row: [String?]) -> String {
    let numeric: Set<String> = ["condition_id", "lat", "lon", "accuracy_m"]
    var members: [(String, JSONValue)] = zip(notificationColumns, row).map { name, cell in
        guard let cell else { return (name, .null) }
        if numeric.contains(name), let d = Double(cell), d.isFinite { return (name, .number(cell)) }
        return (name, .string(cell))
    }
    if let lat = row[5].flatMap(Double.init), let lon = row[6].flatMap(Double.init) {
        members.append(("geometry", .object([("type", .string("Point")),
                                             ("coordinates", .array([.number(JSONValue.numberText(lon)), .number(JSONValue.numberText(lat))]))])))
    } else {
        members.append(("geometry", .null))
    }
    return JSONValue.object(members).serialized
}

/// Writes the notifications `notificationQuery` selects (a run's, a
/// subject's, since a time) in `format` and closes the output; the caller
/// commits it. Row by row from the statement into the file's buffer: a run
/// can write millions, which need not all be held as strings first.
func writeNotifications(_ conn: Connection, run: Int64? = nil, subject: String? = nil, since: String? = nil,
                        format: EventFormat, to output: OutputFile) throws {
    if format == .csv { try output.write(notificationColumns.joined(separator: ",") + "\n") }
    let rows = try conn.prepare(notificationQuery)
    try rows.bind([run.sqlValue, subject.sqlValue, since.sqlValue])
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
        switch format {
        case .csv:
            for i in cells.indices {
                if i > 0 { buffer.append(0x2C) }
                buffer += csvField(cells[i] ?? "").utf8
            }
            buffer.append(0x0A)
        case .ndjson:
            buffer += notificationJSONLine(cells).utf8
            buffer.append(0x0A)
        }
        if buffer.count >= 1 << 16 { try output.write(bytes: buffer); buffer.removeAll(keepingCapacity: true) }
    }
    try output.write(bytes: buffer)
    try output.close()
}

/// `-` names standard input or output in `--fixes` and `--out`.
let standardStream = "-"
