/// Plain decimal numbers (`-35.4998264`, `12.2`) read without `strtod`.
///
/// Why: a fixes file has three of them per row, and glibc's `strtod` (behind
/// `Double(String)`) is the dearest part of reading one. How:
/// Clinger's fast path. A decimal with at most 15 significant digits is an
/// integer m < 2^53 over a power of ten 10^k with k ≤ 22; both are exact
/// doubles, and IEEE division rounds the quotient correctly, so m / 10^k is
/// the double nearest to the decimal: the same value `strtod` gives, bit for
/// bit. Anything else (more digits, an exponent, spaces, `inf`) returns nil
/// and is left to `Double(String)`.
public enum DecimalText {
    private static let powersOfTen: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { acc, _ in acc * 10 } }

    public static func parse(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    public static func parse(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        guard let d = DecimalDigits.scan(b), !d.hasExponent, d.significant <= 15, d.exponent >= -22 else { return nil }
        let value = Double(d.mantissa) / powersOfTen[-d.exponent]
        return d.negative ? -value : value
    }
}
