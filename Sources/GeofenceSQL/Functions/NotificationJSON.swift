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
        literal(#"{"subject_id":"#, &out)
        JSONValue.appendString(n.subjectId, to: &out)
        literal(#","ts":""#, &out)
        n.ts.appendISO8601(to: &out)
        literal(#"","area_id":"#, &out)
        JSONValue.appendString(n.areaId, to: &out)
        literal(#","condition_id":"#, &out)
        integer(n.conditionId, &out)
        literal(#","transition":""#, &out)
        literal(n.transition.jsonText, &out)
        literal(#"","lat":"#, &out)
        number(n.lat, &out)
        literal(#","lon":"#, &out)
        number(n.lon, &out)
        literal(#","accuracy_m":"#, &out)
        number(n.accuracy, &out)
        out.append(UInt8(ascii: "}"))
    }

    /// A member's name and punctuation, copied as bytes (appending a
    /// String's UTF-8 view walks it a byte at a time: a fifth of a
    /// notification's text).
    @inline(__always) private static func literal(_ s: StaticString, _ out: inout [UInt8]) {
        s.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// `JSONValue.numberText(d)`'s bytes: an integral value below 10^15 as an
    /// integer, any other as Swift's shortest text that reads back as `d`.
    private static func number(_ d: Double, _ out: inout [UInt8]) {
        if d == d.rounded() && abs(d) < 1e15 { return integer(Int64(d), &out) }
        var text = d.description
        text.withUTF8 { out.append(contentsOf: $0) }
    }

    /// `String(i)`'s bytes, written from the last digit back into a buffer on the stack.
    private static func integer(_ i: Int64, _ out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { b in
            var at = 20
            var rest = i.magnitude
            repeat {
                at -= 1
                b[at] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            if i < 0 { out.append(UInt8(ascii: "-")) }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[at..<20]))
        }
    }
}

extension ConditionDefinition.Timing {
    /// The transition's name as gf_check's JSON writes it (its raw value).
    fileprivate var jsonText: StaticString {
        switch self {
        case .IN: "IN"
        case .OUT: "OUT"
        case .DWELL: "DWELL"
        }
    }
}
