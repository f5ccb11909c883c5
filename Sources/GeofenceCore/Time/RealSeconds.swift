/// A time given as a REAL number of Unix seconds (a SQLite REAL, a JSON
/// number), written as the decimal text `Timestamp.parse` reads.
///
///     Timestamp.unixSecondsText(1e-05)       // "0.00001"   (1970-01-01T00:00:00.000010Z)
///     Timestamp.unixSecondsText(1795133100)  // "1795133100.0"
///
/// Swift writes a Double in its shortest form, which for |x| < 1e-4 or
/// ≥ 2^53 has an exponent (`1e-05`); Unix seconds as text have none, so a
/// REAL time near the epoch would be refused as malformed. The digits are
/// the shortest form's, moved about the point: the same value, no rounding.
extension Timestamp {
    /// A JSON number given as Unix seconds, as the text `parse` reads: as
    /// written (`1795133100.123456` would lose its last digit as a Double),
    /// but one written with an exponent (`1.7e9`) as the number it is.
    public static func unixSecondsText(jsonNumber n: String) -> String {
        guard n.utf8.contains(where: { $0 == 0x65 || $0 == 0x45 }), let d = Double(n) else { return n }
        return unixSecondsText(d)
    }

    public static func unixSecondsText(_ d: Double) -> String {
        let s = "\(d)"
        guard let e = s.firstIndex(where: { $0 == "e" || $0 == "E" }), let exponent = Int(s[s.index(after: e)...]) else { return s }
        var mantissa = s[..<e]
        let negative = mantissa.first == "-"
        if negative { mantissa = mantissa.dropFirst() }
        let point = mantissa.firstIndex(of: ".") ?? mantissa.endIndex
        let digits = Array(mantissa.filter { $0 != "." })
        let whole = mantissa.distance(from: mantissa.startIndex, to: point) + exponent   // digits before the point
        var out = negative ? "-" : ""
        if whole <= 0 {
            out += "0." + String(repeating: "0", count: -whole) + String(digits)
        } else if whole >= digits.count {
            out += String(digits) + String(repeating: "0", count: whole - digits.count) + ".0"
        } else {
            out += String(digits[..<whole]) + "." + String(digits[whole...])
        }
        return out
    }
}
