/// A number written as text (a CSV field, a SQL text argument, a setting):
/// decimal only, `[+-]?(D+(.D*)?|.D+)([eE][+-]?D+)?`, or the words `nan`,
/// `inf` and `infinity` (any case, with a sign), which the checks after it
/// then refuse by name. `Double(String)` alone (strtod) would also read
/// hexadecimal (`0x1p3` as 8): no data format here writes numbers so, and a
/// value that reads as something else than it looks is refused instead.
public enum NumberText {
    public static func double(_ text: String) -> Double? {
        if let d = DecimalText.parse(text) { return d }
        var text = text
        return text.withUTF8 { b in isDecimal(b) || isSpecial(b) ? Double(String(decoding: b, as: UTF8.self)) : nil }
    }

    static func isDecimal(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        func digits() -> Int { let s = i; while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }; return i - s }
        if i < b.count, b[i] == 0x2B || b[i] == 0x2D { i += 1 }
        var n = digits()
        if i < b.count, b[i] == 0x2E { i += 1; n += digits() }
        guard n > 0 else { return false }
        if i < b.count, b[i] == 0x65 || b[i] == 0x45 {
            i += 1
            if i < b.count, b[i] == 0x2B || b[i] == 0x2D { i += 1 }
            guard digits() > 0 else { return false }
        }
        return i == b.count
    }

    static func isSpecial(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var word = String(decoding: b, as: UTF8.self).lowercased()
        if word.hasPrefix("+") || word.hasPrefix("-") { word.removeFirst() }
        return word == "nan" || word == "inf" || word == "infinity"
    }
}
