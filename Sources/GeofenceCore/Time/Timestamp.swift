// Longer than 300 lines: the one stored time form is parsed (ISO 8601, Unix seconds, leap seconds, the storable years) and printed in one place, so the two cannot disagree.
/// An instant, as whole microseconds since 1970-01-01T00:00:00Z: integers, so
/// ordering and equality are exact (behaviour §6).
public struct Timestamp: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var microseconds: Int64
    public init(microseconds: Int64) { self.microseconds = microseconds }

    public static func < (l: Timestamp, r: Timestamp) -> Bool { l.microseconds < r.microseconds }

    /// UTC text for people: `YYYY-MM-DDTHH:MM:SSZ`, with `.ffffff` only when there are fractions.
    public var description: String { iso8601 }

    public var iso8601: String { text(alwaysFraction: false) }

    /// The form stored in the database: always with six fraction digits, so
    /// that every stored time has the same width and text order is time order
    /// (without it, `…00.5Z` would sort before `…00Z`).
    public var storageText: String { text(alwaysFraction: true) }

    func text(alwaysFraction: Bool) -> String {
        let fast = String(unsafeUninitializedCapacity: 27) { digits(alwaysFraction: alwaysFraction, into: $0) }
        if !fast.isEmpty { return fast }
        let (secs, micros) = microseconds.floorDivided(by: 1_000_000)
        let (days, sod) = secs.floorDivided(by: 86_400)
        let (y, m, d) = CivilDate.fromDays(days)
        var s = CivilDate.format(y, m, d) + "T" + pad(Int(sod / 3600), 2) + ":" + pad(Int(sod % 3600 / 60), 2) + ":" + pad(Int(sod % 60), 2)
        if micros != 0 || alwaysFraction { s += "." + pad(Int(micros), 6) }
        return s + "Z"
    }

    /// Appends `storageText`'s bytes to `out`: a subject record writes one
    /// per INSIDE stay at every judged fix.
    public func appendStorageText(to out: inout [UInt8]) { append(alwaysFraction: true, to: &out) }

    /// Appends `iso8601`'s bytes to `out`: gf_check's JSON writes one per notification.
    public func appendISO8601(to out: inout [UInt8]) { append(alwaysFraction: false, to: &out) }

    private func append(alwaysFraction: Bool, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 27) { b in
            let n = digits(alwaysFraction: alwaysFraction, into: b)
            if n > 0 { out.append(contentsOf: UnsafeBufferPointer(rebasing: b[0..<n])) } else { out += text(alwaysFraction: alwaysFraction).utf8 }
        }
    }

    /// The text of a time of years 0…9999 that has a fraction (or must show
    /// one), written digit by digit into `b` (27 bytes): its length, or 0 for
    /// a time the general path writes. Every judged fix stores one, and the
    /// general path builds a dozen small strings.
    private func digits(alwaysFraction: Bool, into b: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let (secs, micros) = microseconds.floorDivided(by: 1_000_000)
        guard micros != 0 || alwaysFraction else { return 0 }
        let (days, sod) = secs.floorDivided(by: 86_400)
        let (y, m, d) = CivilDate.fromDays(days)
        guard (0...9999).contains(y) else { return 0 }
        var i = 0
        func put(_ v: Int, _ width: Int) {
            var v = v, k = i + width - 1
            while k >= i { b[k] = UInt8(48 + v % 10); v /= 10; k -= 1 }
            i += width
        }
        func put(_ c: UInt8) { b[i] = c; i += 1 }
        put(y, 4); put(0x2D); put(m, 2); put(0x2D); put(d, 2); put(0x54)
        put(Int(sod / 3600), 2); put(0x3A); put(Int(sod % 3600 / 60), 2); put(0x3A); put(Int(sod % 60), 2)
        put(0x2E); put(Int(micros), 6); put(0x5A)
        return i
    }

    /// The instants a time may be: 0000-01-01T00:00:00Z through
    /// 9999-12-31T23:59:59.999999Z, the years the stored form's four digits
    /// hold. A time outside could be stored but never read back, and would
    /// then stop every later judgement of its subject (and a validity time,
    /// every use of its area), so every reader of input refuses it.
    public static let earliest = Timestamp(microseconds: -62_167_219_200 * 1_000_000)
    public static let latest = Timestamp(microseconds: 253_402_300_800 * 1_000_000 - 1)
    public var isStorable: Bool { self >= Self.earliest && self <= Self.latest }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case empty
        case noOffset(String)
        case malformed(String)
        case outOfRange(String)
        case notLeapSecond(String)
        /// A local time the clocks of `zone` skipped (`FixFeed.localZone`).
        case skippedLocal(String, zone: String)
        public var description: String {
            switch self {
            case .empty: "missing time"
            case .noOffset(let s): "time \(Echo.quoted(s)) has no UTC offset (add Z or +09:00): it is ambiguous"
            case .malformed(let s): "time \(Echo.quoted(s)) is neither ISO 8601 with an offset nor Unix seconds"
            case .outOfRange(let s):
                "time \(Echo.quoted(s)) is outside 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z (Unix seconds -62167219200 to 253402300799)"
            case .skippedLocal(let s, let zone):
                "local time \(Echo.quoted(s)) does not exist in \(zone): the clocks skipped it (a daylight-saving change); write its offset"
            case .notLeapSecond(let s): "time \(Echo.quoted(s)) has second 60, which only a leap second has (23:59:60 UTC on the last day of a month)"
            }
        }
    }

    /// Accepts ISO 8601 with an offset (`Z`, `+09:00`, `+0900`, `+09`; `T` or a space;
    /// fractions of a second) or Unix seconds (integer or decimal).
    public static func parse(_ text: String) throws -> Timestamp {
        if let t = parseStorageText(text) { return t }
        let s = text.trimmingSpaces
        if s.isEmpty { throw ParseError.empty }
        if let unix = parseUnixSecondsUnchecked(s) {
            guard unix.isStorable else { throw ParseError.outOfRange(s) }
            return unix
        }
        // Unix seconds of more than 12 digits: a number, only too large.
        let number = s.utf8.drop { $0 == 0x2D }
        if number.count == s.utf8.count - (s.hasPrefix("-") ? 1 : 0), number.filter({ $0 == 0x2E }).count <= 1,
           number.allSatisfy({ $0 == 0x2E || (0x30...0x39).contains($0) }), !number.isEmpty, number.first != 0x2E, number.last != 0x2E {
            throw ParseError.outOfRange(s)
        }
        var bytes = s
        return try bytes.withUTF8 { try parseOffsetText($0, { s }).get() }
    }

    /// `YYYY-MM-DD(T|t| )HH:MM[:SS[(.|,)digits]](Z|z|±HH[[:]MM])` from bytes
    /// without edge spaces: the one reader of ISO 8601 text, for `parse` and
    /// for a batch's bytes (`parseCommon`). `text` makes the String errors
    /// quote, only when there is an error.
    static func parseOffsetText(_ b: UnsafeBufferPointer<UInt8>, _ text: () -> String) -> Result<Timestamp, ParseError> {
        func fail(_ e: (String) -> ParseError) -> Result<Timestamp, ParseError> { .failure(e(text())) }
        var i = 0
        func num(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in 0..<n { let c = b[i + k]; guard c >= 48 && c <= 57 else { return nil }; v = v * 10 + Int(c - 48) }
            i += n
            return v
        }
        func lit(_ c: UInt8) -> Bool { if i < b.count && b[i] == c { i += 1; return true }; return false }
        guard let y = num(4), lit(45), let mo = num(2), lit(45), let d = num(2) else { return fail(ParseError.malformed) }
        guard i < b.count, b[i] == 84 || b[i] == 116 || b[i] == 32 else {
            if i == b.count { return fail(ParseError.noOffset) }
            return fail(ParseError.malformed)
        }
        i += 1
        guard let h = num(2), lit(58), let mi = num(2) else { return fail(ParseError.malformed) }
        var sec = 0, micros = 0
        if lit(58) {
            guard let ss = num(2) else { return fail(ParseError.malformed) }
            sec = ss
            if lit(46) || lit(44) {
                var digits = 0
                while i < b.count, b[i] >= 48, b[i] <= 57 {
                    if digits < 6 { micros = micros * 10 + Int(b[i] - 48) }
                    digits += 1; i += 1
                }
                guard digits > 0 else { return fail(ParseError.malformed) }
                for _ in digits..<max(digits, 6) { micros *= 10 }
            }
        }
        guard i < b.count else { return fail(ParseError.noOffset) }
        var offsetMinutes = 0
        if lit(90) || lit(122) {
            offsetMinutes = 0
        } else if b[i] == 43 || b[i] == 45 {
            let sign = b[i] == 45 ? -1 : 1
            i += 1
            guard let oh = num(2) else { return fail(ParseError.malformed) }
            // ±HH alone is an offset of whole hours (ISO 8601; PostgreSQL writes `+09`).
            let om: Int
            if i == b.count {
                om = 0
            } else {
                _ = lit(58)
                guard let m = num(2) else { return fail(ParseError.malformed) }
                om = m
            }
            guard oh <= 23, om <= 59 else { return fail(ParseError.malformed) }
            offsetMinutes = sign * (oh * 60 + om)
        } else {
            return fail(ParseError.malformed)
        }
        guard i == b.count else { return fail(ParseError.malformed) }
        guard (1...12).contains(mo), d >= 1, d <= CivilDate.daysInMonth(y, mo), h <= 23, mi <= 59, sec <= 60 else {
            return fail(ParseError.malformed)
        }
        let days = CivilDate.toDays(y, mo, d)
        let local = Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + min(sec, 59))
        let utc = local - Int64(offsetMinutes * 60)
        if sec == 60 {
            // A leap second: only 23:59:60 UTC at the end of a month. Unix
            // time has no place for it, so it is read as 23:59:59 plus its
            // fraction (POSIX's reading): in order, but one second early.
            let (utcDays, utcSecond) = utc.floorDivided(by: 86_400)
            let (_, _, nextDay) = CivilDate.fromDays(utcDays + 1)
            guard utcSecond == 86_399, nextDay == 1 else { return fail(ParseError.notLeapSecond) }
        }
        let t = Timestamp(microseconds: utc * 1_000_000 + Int64(micros))
        // 9999-12-31T23:30:00-01:00 is in year 10000 (UTC).
        guard t.isStorable else { return fail(ParseError.outOfRange) }
        return .success(t)
    }

    /// The stored form, `YYYY-MM-DDTHH:MM:SS.ffffffZ`, read without allocating:
    /// state is full of these, and judgement reads them back per subject.
    static func parseStorageText(_ s: String) -> Timestamp? {
        var s = s
        return s.withUTF8 { parseStorageText($0) }
    }

    /// What `parse` gives for the two forms a batch of fixes mostly holds
    /// (the stored form, Unix seconds), read from bytes without spaces at
    /// either end; nil for anything else, which `parse` then reads.
    public static func parseCommon(_ b: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        if let t = parseStorageText(b) ?? parseUnixSeconds(b) { return t }
        // ISO 8601 with an offset, as people write it: read here rather than
        // from a String of every field of the row.
        if case .success(let t) = parseOffsetText(b, { String(decoding: b, as: UTF8.self) }) { return t }
        return nil
    }


    static func parseStorageText(_ b: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        guard b.count == 27, b[4] == 45, b[7] == 45, b[10] == 84, b[13] == 58, b[16] == 58, b[19] == 46, b[26] == 90 else { return nil }
        func num(_ at: Int, _ n: Int) -> Int? {
            var v = 0
            for k in at..<(at + n) { let c = b[k]; guard c >= 48 && c <= 57 else { return nil }; v = v * 10 + Int(c - 48) }
            return v
        }
        guard let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2),
              let sec = num(17, 2), let us = num(20, 6), (1...12).contains(mo), d >= 1, d <= CivilDate.daysInMonth(y, mo),
              h <= 23, mi <= 59, sec <= 59 else { return nil }
        let secs = Int64(CivilDate.toDays(y, mo, d)) * 86_400 + Int64(h * 3600 + mi * 60 + sec)
        return Timestamp(microseconds: secs * 1_000_000 + Int64(us))
    }

    /// Unix seconds written as a decimal (`DecimalDigits`: `1795133100`,
    /// `-1.5`, `1.7e9`, `5.`, `.5`), at most 12 digits before the point once
    /// the exponent is applied, read exactly from the digits (never through a
    /// Double, which would move the microseconds). Digits past the
    /// microsecond are cut towards the earlier time, as they are in ISO 8601
    /// text (so `-0.0000001` is 1969-12-31T23:59:59.999999Z). nil also for a
    /// time outside `earliest...latest`. One pass over the bytes, no
    /// allocation: a batch of fixes in Unix seconds parses one per row.
    static func parseUnixSeconds(_ s: String) -> Timestamp? {
        parseUnixSecondsUnchecked(s).flatMap { $0.isStorable ? $0 : nil }
    }

    static func parseUnixSeconds(_ b: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        parseUnixSecondsUnchecked(b).flatMap { $0.isStorable ? $0 : nil }
    }

    /// The Unix seconds, whatever the year (`parse` says which are out of range).
    static func parseUnixSecondsUnchecked(_ s: String) -> Timestamp? {
        var s = s
        return s.withUTF8 { parseUnixSecondsUnchecked($0) }
    }

    static func parseUnixSecondsUnchecked(_ b: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        guard let d = DecimalDigits.scan(b) else { return nil }
        // Beyond every storable time: refused by the callers as out of range (not as no number).
        guard let us = d.millionths else { return Timestamp(microseconds: d.negative ? .min : .max) }
        return Timestamp(microseconds: us)
    }
}

/// Proleptic Gregorian calendar arithmetic on day numbers (days since 1970-01-01),
/// after Howard Hinnant's civil_from_days / days_from_civil.
public enum CivilDate {
    public static func toDays(_ y: Int, _ m: Int, _ d: Int) -> Int {
        let yy = m <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let mp = (m + 9) % 12
        let doy = (153 * mp + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public static func fromDays(_ z0: Int64) -> (Int, Int, Int) {
        let z = Int(z0) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    public static func daysInMonth(_ y: Int, _ m: Int) -> Int {
        switch m {
        case 2: return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// `YYYY-MM-DD`; a year outside 0000...9999 (the local date of a time
    /// at either end of the storable range, 14 hours off UTC) as `-0001` or `10000`.
    public static func format(_ y: Int, _ m: Int, _ d: Int) -> String {
        (y < 0 ? "-" + pad(-y, 4) : pad(y, 4)) + "-" + pad(m, 2) + "-" + pad(d, 2)
    }

    /// A date this program stored (`format`'s form, any year it writes);
    /// `parse` is for input, four-digit years only.
    public static func parseStored(_ s: String) -> Int? {
        let negative = s.hasPrefix("-")
        let p = (negative ? s.dropFirst() : Substring(s)).split(separator: "-", omittingEmptySubsequences: false)
        guard p.count == 3, (4...5).contains(p[0].count), p[1].count == 2, p[2].count == 2,
              p.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }),
              let y0 = Int(p[0]), let m = Int(p[1]), let d = Int(p[2]) else { return nil }
        let y = negative ? -y0 : y0
        guard (1...12).contains(m), d >= 1, d <= daysInMonth(y, m) else { return nil }
        return toDays(y, m, d)
    }

    /// Parses `YYYY-MM-DD` into a day number.
    public static func parse(_ s: String) -> Int? {
        let p = s.split(separator: "-", omittingEmptySubsequences: false)
        guard p.count == 3, p[0].count == 4, p[1].count == 2, p[2].count == 2,
              let y = Int(p[0]), let m = Int(p[1]), let d = Int(p[2]),
              (1...12).contains(m), d >= 1, d <= daysInMonth(y, m) else { return nil }
        return toDays(y, m, d)
    }
}

func pad(_ v: Int, _ width: Int) -> String {
    let s = String(v)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
}

extension Int64 {
    /// Floor division and a non-negative remainder.
    func floorDivided(by d: Int64) -> (Int64, Int64) {
        let q = self / d, r = self % d
        return r < 0 ? (q - 1, r + d) : (q, r)
    }
}

extension Character {
    var isASCIIDigit: Bool { asciiValue.map { $0 >= 48 && $0 <= 57 } ?? false }
}

extension String {
    public var trimmingSpaces: String {
        // Most text has no edge space: answered from its end bytes, without a copy.
        func space(_ c: UInt8?) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
        guard space(utf8.first) || space(utf8.last) else { return self }
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\n" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s = s.dropLast() }
        return String(s)
    }
    /// Without the spaces (only U+0020) at its ends, as a CSV field or a
    /// number in a text column is read.
    public func trimmingEdgeSpaces() -> String {
        // Most text has no edge space: answer from its bytes, without a copy.
        guard utf8.first == 0x20 || utf8.last == 0x20 else { return self }
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: "0", count: width - count)
    }
}
