import GeofenceCore

/// gf_check's return value: the call's notifications as a JSON array, one
/// object per notification, members in this order:
///
///     [{"subject_id":"u1","ts":"2026-11-20T09:00:00Z","area_id":"A1","condition_id":1,
///       "transition":"IN","lat":35.68,"lon":139.76,"accuracy_m":10}]
///
/// Numbers as `JSONValue.numberText` writes them (an integral value without a
/// fraction, else the shortest text that reads back to the same double), the
/// time as `Timestamp.iso8601`, strings escaped as `JSONValue.appendString`.
///
/// How it works: the text is written as UTF-8 bytes in one pass into one
/// buffer. Every call of gf_check returns it, so it is written without the
/// JSONValue tree and the String appends a general writer costs (they were
/// an eighth of a call that notifies).
public enum NotificationJSON {
    public static func array(_ ns: [Notification]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(2 + ns.count * 200)
        out.append(UInt8(ascii: "["))
        for (i, n) in ns.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            append(n, to: &out)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// One notification's object.
    static func append(_ n: Notification, to out: inout [UInt8]) {
        out += #"{"subject_id":"#.utf8
        JSONValue.appendString(n.subjectId, to: &out)
        out += #","ts":""#.utf8
        out += n.ts.iso8601.utf8
        out += #"","area_id":"#.utf8
        JSONValue.appendString(n.areaId, to: &out)
        out += #","condition_id":"#.utf8
        out += String(n.conditionId).utf8
        out += #","transition":""#.utf8
        out += n.transition.rawValue.utf8
        out += #"","lat":"#.utf8
        out += JSONValue.numberText(n.lat).utf8
        out += #","lon":"#.utf8
        out += JSONValue.numberText(n.lon).utf8
        out += #","accuracy_m":"#.utf8
        out += JSONValue.numberText(n.accuracy).utf8
        out.append(UInt8(ascii: "}"))
    }
}
