/// Pieces of JSON text appended as UTF-8 bytes to one buffer: what the texts
/// written at every judged fix are made of (a subject's record, gf_check's
/// notifications).
///
///     var out: [UInt8] = []
///     JSONBytes.literal(#"{"judged":"#, &out)
///     JSONBytes.integer(41, &out)
///     JSONBytes.literal("}", &out)             // {"judged":41}
///
/// How it works: a literal is copied from its static bytes and a number's
/// digits from a buffer on the stack, so no String is made in between;
/// appending a String's UTF-8 view instead walks it a byte at a time
/// through generic code, which cost a fifth of a record's encoding.
public enum JSONBytes {
    /// A member's name and punctuation, as written in the source.
    @inline(__always) public static func literal(_ s: StaticString, _ out: inout [UInt8]) {
        s.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// `String(i)`'s bytes, written from the last digit back.
    public static func integer(_ i: Int64, _ out: inout [UInt8]) {
        if i >= 0 && i < 10 { out.append(UInt8(ascii: "0") + UInt8(i)); return }
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

    /// `d.description`'s bytes: Swift's shortest text that reads back as
    /// `d`, always with a fraction or an exponent ("35.0", "1e-07").
    public static func description(_ d: Double, _ out: inout [UInt8]) {
        var text = d.description
        text.withUTF8 { out.append(contentsOf: $0) }
    }

    /// `ConditionDefinition.formatDate(day)`'s bytes (`YYYY-MM-DD`), written
    /// digit by digit for the years 0000 to 9999: a record writes one per
    /// suppressing condition it holds, at every judged fix.
    public static func date(_ day: Int, _ out: inout [UInt8]) {
        let (y, m, d) = CivilDate.fromDays(Int64(day))
        guard (0...9999).contains(y) else { return raw(CivilDate.format(y, m, d), &out) }
        digits(y, 1000, &out)
        out.append(UInt8(ascii: "-"))
        digits(m, 10, &out)
        out.append(UInt8(ascii: "-"))
        digits(d, 10, &out)
    }

    /// `value`'s digits from the place of `divisor` down, zeros before (`value` ≥ 0).
    private static func digits(_ value: Int, _ divisor: Int, _ out: inout [UInt8]) {
        var divisor = divisor
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    /// A string's bytes as they are (the caller knows they need no escape).
    public static func raw(_ s: String, _ out: inout [UInt8]) {
        var s = s
        s.withUTF8 { out.append(contentsOf: $0) }
    }
}
