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

/// Writes notification rows in `format` and closes the output; the caller commits it.
func writeNotifications(_ rows: [[String?]], format: EventFormat, to output: OutputFile) throws {
    switch format {
    case .csv:
        try output.write(notificationColumns.joined(separator: ",") + "\n")
        for row in rows { try output.write(row.map { csvField($0 ?? "") }.joined(separator: ",") + "\n") }
    case .ndjson:
        for row in rows { try output.write(notificationJSONLine(row) + "\n") }
    }
    try output.close()
}

/// `-` names standard input or output in `--fixes` and `--out`.
let standardStream = "-"
