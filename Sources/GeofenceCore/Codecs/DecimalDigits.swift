/// A decimal number's digits as written, read in one pass without allocating:
/// the grammar every number of the engine's inputs is read by,
/// `[+-]D[.D][(e|E)[+-]D]`, also `5.` and `.5`.
///
///     DecimalDigits.scan("-0.050")   // negative, mantissa 50, exponent -3
///     DecimalDigits.scan("1.7e9")    // mantissa 17, exponent 8
///
/// The value is mantissa × 10^exponent, exactly, with the first 18
/// significant digits in the mantissa (an exact UInt64); a later non-zero
/// digit only sets `cutNonZero`. Its users: `DecimalText` (a Double, by
/// Clinger's fast path) and Unix seconds (exact microseconds).
public struct DecimalDigits {
    public var negative = false
    public var mantissa: UInt64 = 0
    public var exponent = 0
    /// Significant digits written (leading zeros are not; zeros after the first other digit are).
    public var significant = 0
    /// A non-zero digit past the 18 kept in `mantissa`.
    public var cutNonZero = false
    public var hasExponent = false

    static let kept = 18

    public static func scan(_ b: UnsafeBufferPointer<UInt8>) -> DecimalDigits? {
        var d = DecimalDigits()
        var i = 0
        if i < b.count, b[i] == 0x2D || b[i] == 0x2B { d.negative = b[i] == 0x2D; i += 1 }
        var anyDigit = false, sawDot = false
        while i < b.count {
            let c = b[i]
            if c == 0x2E {
                if sawDot { return nil }
                sawDot = true
            } else if c >= 0x30 && c <= 0x39 {
                anyDigit = true
                if d.significant > 0 || c != 0x30 { d.significant += 1 }
                if d.significant == 0 {
                    if sawDot { d.exponent -= 1 }  // a zero between the point and the first digit
                } else if d.significant <= kept {
                    d.mantissa = d.mantissa * 10 + UInt64(c - 0x30)
                    if sawDot { d.exponent -= 1 }
                } else {
                    if c != 0x30 { d.cutNonZero = true }
                    if !sawDot { d.exponent += 1 }
                }
            } else {
                break
            }
            i += 1
        }
        guard anyDigit else { return nil }
        guard i < b.count else { return d }
        guard b[i] == 0x65 || b[i] == 0x45 else { return nil }
        i += 1
        var expNegative = false
        if i < b.count, b[i] == 0x2D || b[i] == 0x2B { expNegative = b[i] == 0x2D; i += 1 }
        var e = 0, expDigits = 0
        while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
            e = min(e * 10 + Int(b[i] - 0x30), 100_000)  // far past any number's range, never an overflow
            expDigits += 1
            i += 1
        }
        guard expDigits > 0, i == b.count else { return nil }
        d.hasExponent = true
        d.exponent += expNegative ? -e : e
        return d
    }

    /// The value × 10^6 as an integer, cut towards −∞ (the earlier time, for
    /// Unix seconds): nil when its magnitude reaches 10^18 (more than 12
    /// digits before the point).
    public var millionths: Int64? {
        guard mantissa != 0 else { return 0 }
        let shift = exponent + 6
        var v: UInt64, cut = cutNonZero
        if shift >= 0 {
            guard shift <= 18 else { return nil }
            let (m, overflow) = mantissa.multipliedReportingOverflow(by: Self.powers[shift])
            guard !overflow else { return nil }
            v = m
        } else if -shift > 18 {
            v = 0
            cut = true
        } else {
            let p = Self.powers[-shift]
            v = mantissa / p
            if mantissa % p != 0 { cut = true }
        }
        guard v < Self.powers[18] else { return nil }
        let signed = Int64(v)
        return negative ? -signed - (cut ? 1 : 0) : signed
    }

    private static let powers: [UInt64] = (0...19).map { k in (0..<k).reduce(1) { acc, _ in acc * 10 } }
}
