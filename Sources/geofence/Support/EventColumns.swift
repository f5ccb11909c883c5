import GeofenceCore
import GeofenceSQL

/// The columns of one kind of event row as it is written for other programs
/// (notifications; explanations, `geofence explain`): their names in order,
/// which are numbers in JSON, which one is a stored time shown in its short
/// form, and which two are the position a GeoJSON Point is made of.
///
///     EventColumns.notifications.names  // subject_id, ts, area_id, …
///     EventColumns.explanations.lat     // 7: gf_explain's lat
///
/// One description per kind, so CSV, NDJSON and GeoJSON of every kind are
/// written by the same code (`EventWriting.swift`).
struct EventColumns {
    let names: [String]
    /// Each column's JSON opening: `"subject_id":`, then `,"ts":` and so on.
    let keys: [[UInt8]]
    /// Which columns are written as JSON numbers when their text reads as one.
    let numeric: [Bool]
    /// The stored time's column (six fraction digits kept for exact
    /// ordering; people and programs get `Timestamp.iso8601`).
    let time: Int
    /// The columns of the position, WGS 84 degrees.
    let lat: Int, lon: Int

    /// Columns named `names`; `numeric` names the number columns. The time
    /// is the column `ts`, the position `lat` and `lon`: every kind has them.
    init(_ names: [String], numeric: Set<String>) {
        self.names = names
        keys = names.enumerated().map { i, name in
            var key: [UInt8] = i == 0 ? [] : [UInt8(ascii: ",")]
            JSONValue.appendString(name, to: &key)
            return key + [UInt8(ascii: ":")]
        }
        self.numeric = names.map(numeric.contains)
        time = names.firstIndex(of: "ts")!
        lat = names.firstIndex(of: "lat")!
        lon = names.firstIndex(of: "lon")!
    }

    /// A stored cell as written: the time column in its short form (nil
    /// when NULL or not a time), others as their text, NULL as nil.
    func field(_ i: Int, _ v: SQLiteValue) -> String? {
        i == time ? v.string.flatMap { try? Timestamp.parse($0).iso8601 } : (v.isNull ? nil : v.string)
    }

    static let notifications = EventColumns(notificationColumns, numeric: ["condition_id", "lat", "lon", "accuracy_m"])
    static let explanations = EventColumns(explanationColumns, numeric: ["run_id", "condition_id", "lat", "lon"])
}

/// gf_explain's columns as `geofence explain` lists them.
let explanationColumns = ["run_id", "subject_id", "ts", "area_id", "condition_id", "kind", "reason", "lat", "lon"]
