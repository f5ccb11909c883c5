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
        // A call's notifications are of one fix: its subject, time and
        // position are written once and copied into each object after
        // (`sharedBy`: the notification they were written for).
        var head: [UInt8] = [], tail: [UInt8] = []
        var sharedBy = -1
        for i in ns.indices {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            if sharedBy < 0 || !sameFix(ns[sharedBy], ns[i]) {
                (head, tail, sharedBy) = (Self.head(ns[i]), Self.tail(ns[i]), i)
            }
            out.append(contentsOf: head)
            JSONValue.appendString(ns[i].areaId, to: &out)
            literal(#","condition_id":"#, &out)
            JSONBytes.integer(ns[i].conditionId, &out)
            literal(ns[i].transition.jsonMember, &out)
            out.append(contentsOf: tail)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// An object's members before the area's id: `{"subject_id":…,"ts":…,"area_id":`.
    private static func head(_ n: Notification) -> [UInt8] {
        var out: [UInt8] = []
        literal(#"{"subject_id":"#, &out)
        JSONValue.appendString(n.subjectId, to: &out)
        literal(#","ts":""#, &out)
        n.ts.appendISO8601(to: &out)
        literal(#"","area_id":"#, &out)
        return out
    }

    /// An object's members after its transition: `","lat":…,"lon":…,"accuracy_m":…}`.
    private static func tail(_ n: Notification) -> [UInt8] {
        var out: [UInt8] = []
        literal(#"","lat":"#, &out)
        number(n.lat, &out)
        literal(#","lon":"#, &out)
        number(n.lon, &out)
        literal(#","accuracy_m":"#, &out)
        number(n.accuracy, &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Whether `a` and `b` write the same head and tail: the same subject
    /// (by its bytes), time, and numbers to the bit (-0.0 is not 0.0).
    private static func sameFix(_ a: Notification, _ b: Notification) -> Bool {
        a.ts == b.ts && a.lat.bitPattern == b.lat.bitPattern && a.lon.bitPattern == b.lon.bitPattern
            && a.accuracy.bitPattern == b.accuracy.bitPattern && a.subjectId.hasSameUTF8(as: b.subjectId)
    }

    @inline(__always) private static func literal(_ s: StaticString, _ out: inout [UInt8]) { JSONBytes.literal(s, &out) }

    /// `JSONValue.numberText(d)`'s bytes: an integral value below 10^15 as an
    /// integer, any other as Swift's shortest text that reads back as `d`.
    private static func number(_ d: Double, _ out: inout [UInt8]) {
        if d == d.rounded() && abs(d) < 1e15 { return JSONBytes.integer(Int64(d), &out) }
        JSONBytes.description(d, &out)
    }
}

extension ConditionDefinition.Timing {
    /// The transition member as gf_check's JSON writes it (its raw value),
    /// up to its closing quote, which the tail writes.
    fileprivate var jsonMember: StaticString {
        switch self {
        case .IN: #","transition":"IN"#
        case .OUT: #","transition":"OUT"#
        case .DWELL: #","transition":"DWELL"#
        }
    }
}
