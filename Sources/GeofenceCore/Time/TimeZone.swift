#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// An IANA time zone read from the system's TZif file (RFC 8536): the
/// transition table, then the POSIX TZ rule of its footer for instants past
/// the table (tzdata "slim" files stop early and rely on it). Daylight saving
/// is whatever the tz database says, so windows and day counts follow it.
public final class TimeZone: @unchecked Sendable {
    public let name: String
    private let transitions: [Int64]   // UTC seconds, ascending
    private let offsets: [Int32]       // UTC offset in seconds after each transition
    private let initialOffset: Int32
    private let rule: PosixRule?

    public static let utc = TimeZone(name: "UTC", transitions: [], offsets: [], initialOffset: 0, rule: nil)

    init(name: String, transitions: [Int64], offsets: [Int32], initialOffset: Int32, rule: PosixRule?) {
        self.name = name; self.transitions = transitions; self.offsets = offsets
        self.initialOffset = initialOffset; self.rule = rule
    }

    /// Seconds to add to UTC for local time at `t`.
    public func offset(at t: Timestamp) -> Int {
        let s = Int64(t.microseconds.floorDivided(by: 1_000_000).0)
        if transitions.isEmpty || s >= transitions.last! {
            if let rule { return rule.offset(atUTC: s) }
            return Int(offsets.last ?? initialOffset)
        }
        if s < transitions[0] { return Int(initialOffset) }
        var lo = 0, hi = transitions.count - 1   // last index with transitions[i] <= s
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if transitions[mid] <= s { lo = mid } else { hi = mid - 1 }
        }
        return Int(offsets[lo])
    }

    /// The local calendar fields of `t` in this zone.
    public func local(_ t: Timestamp) -> LocalTime {
        let secs = t.microseconds.floorDivided(by: 1_000_000).0 + Int64(offset(at: t))
        let (day, sod) = secs.floorDivided(by: 86_400)
        return LocalTime(day: Int(day), secondOfDay: Int(sod))
    }

    // MARK: Loading

    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    public static func load(_ name: String, directory: String = TimeZoneNames.directory) throws -> TimeZone {
        if name == "UTC" || name == "Etc/UTC" { return utc }
        guard TimeZoneNames.isKnown(name) else { throw LoadError(description: TimeZoneNames.unknown(name)) }
        let chunks = try FileChunks(path: directory + "/" + name)
        var bytes: [UInt8] = []
        while let c = try chunks.next() { bytes += c }
        guard let tz = parse(name: name, bytes) else { throw LoadError(description: "time zone file for \(Echo.quoted(name)) is damaged") }
        return tz
    }

    /// Decodes TZif bytes (RFC 8536, versions 1–4); nil if they are damaged.
    public static func parse(name: String, _ b: [UInt8]) -> TimeZone? {
        var p = 0
        func u32(_ at: Int) -> UInt32? {
            guard at + 4 <= b.count else { return nil }
            return UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
        }
        func i64(_ at: Int) -> Int64? {
            guard let hi = u32(at), let lo = u32(at + 4) else { return nil }
            return Int64(bitPattern: UInt64(hi) << 32 | UInt64(lo))
        }
        func header(_ at: Int) -> (version: UInt8, counts: [Int])? {
            guard at + 44 <= b.count, b[at] == 0x54, b[at + 1] == 0x5A, b[at + 2] == 0x69, b[at + 3] == 0x66 else { return nil }
            var counts: [Int] = []
            for k in 0..<6 { guard let c = u32(at + 20 + 4 * k) else { return nil }; counts.append(Int(c)) }
            return (b[at + 4], counts)
        }
        guard let h1 = header(0) else { return nil }
        // counts: isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
        func blockSize(_ c: [Int], _ timeSize: Int) -> Int {
            c[3] * timeSize + c[3] + c[4] * 6 + c[5] + c[2] * (timeSize + 4) + c[1] + c[0]
        }
        var timeSize = 4
        var counts = h1.counts
        p = 44
        if h1.version >= 0x32 {   // '2' or later: skip the 32-bit block, read the 64-bit one
            p += blockSize(counts, 4)
            guard let h2 = header(p) else { return nil }
            counts = h2.counts
            timeSize = 8
            p += 44
        }
        let timecnt = counts[3], typecnt = counts[4]
        guard typecnt > 0, p + blockSize(counts, timeSize) <= b.count else { return nil }
        var times: [Int64] = []
        for k in 0..<timecnt {
            guard let t = timeSize == 8 ? i64(p + 8 * k) : u32(p + 4 * k).map({ Int64(Int32(bitPattern: $0)) }) else { return nil }
            times.append(t)
        }
        p += timecnt * timeSize
        let indices = Array(b[p..<(p + timecnt)])
        p += timecnt
        var typeOffsets: [Int32] = [], typeIsDst: [Bool] = []
        for k in 0..<typecnt {
            guard let o = u32(p + 6 * k) else { return nil }
            // RFC 8536 §3.2: utoff SHOULD be in [-89999, 93599]; anything wider is damage.
            let offset = Int32(bitPattern: o)
            guard offset > -100_000 && offset < 100_000 else { return nil }
            typeOffsets.append(offset)
            typeIsDst.append(b[p + 6 * k + 4] != 0)
        }
        p += typecnt * 6 + counts[5] + counts[2] * (timeSize + 4) + counts[1] + counts[0]
        var offsets: [Int32] = []
        for i in indices { guard Int(i) < typecnt else { return nil }; offsets.append(typeOffsets[Int(i)]) }
        // Before the first transition: the first standard-time type (RFC 8536 §3.2).
        let initial = typeIsDst.firstIndex(of: false).map { typeOffsets[$0] } ?? typeOffsets[0]
        var rule: PosixRule?
        if timeSize == 8, p < b.count, b[p] == 0x0A, let end = b[(p + 1)...].firstIndex(of: 0x0A) {
            // An empty footer means "no rule"; one that does not parse means a damaged file.
            let text = String(decoding: b[(p + 1)..<end], as: UTF8.self)
            if !text.isEmpty {
                guard let r = PosixRule(text) else { return nil }
                rule = r
            }
        }
        return TimeZone(name: name, transitions: times, offsets: offsets, initialOffset: initial, rule: rule)
    }
}

/// Local calendar fields.
public struct LocalTime: Equatable, Sendable {
    /// Days since 1970-01-01 in local time.
    public var day: Int
    public var secondOfDay: Int
    public var minuteOfDay: Int { secondOfDay / 60 }
    /// Monday = 0 … Sunday = 6 (1970-01-01 was a Thursday).
    public var weekday: Int { ((day % 7) + 7 + 3) % 7 }
}

/// A POSIX TZ string such as `EST5EDT,M3.2.0,M11.1.0` or `<+09>-9`.
struct PosixRule {
    enum Date { case monthWeekDay(Int, Int, Int), julian1(Int), julian0(Int) }
    let stdOffset: Int            // seconds east of UTC
    let dst: (offset: Int, start: Date, startTime: Int, end: Date, endTime: Int)?

    init?(_ s: String) {
        var c = Array(s.utf8)[...]
        func name() -> Bool {
            if c.first == UInt8(ascii: "<") {
                guard let close = c.firstIndex(of: UInt8(ascii: ">")) else { return false }
                c = c[(close + 1)...]
                return true
            }
            var n = 0
            while let f = c.first, (f >= 65 && f <= 90) || (f >= 97 && f <= 122) { c = c.dropFirst(); n += 1 }
            return n >= 3
        }
        /// A decimal in `range`; longer digit runs are refused before they can overflow.
        func number(_ range: ClosedRange<Int>) -> Int? {
            var v = 0, n = 0
            while let f = c.first, f >= 48, f <= 57 {
                guard n < 4 else { return nil }
                v = v * 10 + Int(f - 48); c = c.dropFirst(); n += 1
            }
            return n > 0 && range.contains(v) ? v : nil
        }
        /// [+-]hh[:mm[:ss]] in seconds.
        func time() -> Int? {
            var sign = 1
            if c.first == UInt8(ascii: "-") { sign = -1; c = c.dropFirst() } else if c.first == UInt8(ascii: "+") { c = c.dropFirst() }
            // Hours to 167: RFC 8536 §3.3.1 extends POSIX's 24.
            guard let h = number(0...167) else { return nil }
            var total = h * 3600
            if c.first == UInt8(ascii: ":") { c = c.dropFirst(); guard let m = number(0...59) else { return nil }; total += m * 60 }
            if c.first == UInt8(ascii: ":") { c = c.dropFirst(); guard let sec = number(0...59) else { return nil }; total += sec }
            return sign * total
        }
        func date() -> Date? {
            if c.first == UInt8(ascii: "M") {
                c = c.dropFirst()
                func dot() -> Bool { guard c.first == UInt8(ascii: ".") else { return false }; c = c.dropFirst(); return true }
                guard let m = number(1...12), dot(), let w = number(1...5), dot(), let d = number(0...6) else { return nil }
                return .monthWeekDay(m, w, d)
            }
            if c.first == UInt8(ascii: "J") { c = c.dropFirst(); return number(1...365).map(Date.julian1) }
            return number(0...365).map(Date.julian0)
        }
        guard name(), let std = time() else { return nil }
        stdOffset = -std
        if c.isEmpty { dst = nil; return }
        guard name() else { return nil }
        var dstOffset = stdOffset + 3600
        if let f = c.first, f != UInt8(ascii: ",") { guard let t = time() else { return nil }; dstOffset = -t }
        guard c.first == UInt8(ascii: ",") else { return nil }
        c = c.dropFirst()
        guard let start = date() else { return nil }
        var startTime = 7200, endTime = 7200
        if c.first == UInt8(ascii: "/") { c = c.dropFirst(); guard let t = time() else { return nil }; startTime = t }
        guard c.first == UInt8(ascii: ",") else { return nil }
        c = c.dropFirst()
        guard let end = date() else { return nil }
        if c.first == UInt8(ascii: "/") { c = c.dropFirst(); guard let t = time() else { return nil }; endTime = t }
        guard c.isEmpty else { return nil }
        dst = (dstOffset, start, startTime, end, endTime)
    }

    func offset(atUTC s: Int64) -> Int {
        guard let dst else { return stdOffset }
        let (day, _) = (s + Int64(stdOffset)).floorDivided(by: 86_400)
        let (year, _, _) = CivilDate.fromDays(day)
        // Transitions in UTC: the start is given in standard time, the end in daylight time.
        let start = Int64(Self.dayOf(dst.start, year)) * 86_400 + Int64(dst.startTime - stdOffset)
        let end = Int64(Self.dayOf(dst.end, year)) * 86_400 + Int64(dst.endTime - dst.offset)
        let inDst = start < end ? (s >= start && s < end) : (s < end || s >= start)
        return inDst ? dst.offset : stdOffset
    }

    static func dayOf(_ d: Date, _ year: Int) -> Int {
        switch d {
        case .julian1(let n):   // 1…365, February 29 never counted
            let jan1 = CivilDate.toDays(year, 1, 1)
            let leap = CivilDate.daysInMonth(year, 2) == 29
            return jan1 + n - 1 + (leap && n >= 60 ? 1 : 0)
        case .julian0(let n):
            return CivilDate.toDays(year, 1, 1) + n
        case .monthWeekDay(let m, let w, let wd):
            let first = CivilDate.toDays(year, m, 1)
            let firstWeekday = ((first % 7) + 7 + 4) % 7      // Sunday = 0
            var day = first + (wd - firstWeekday + 7) % 7 + (w - 1) * 7
            let last = CivilDate.toDays(year, m, CivilDate.daysInMonth(year, m))
            while day > last { day -= 7 }
            return day
        }
    }
}

/// Zones loaded once per process (they are immutable).
public final class TimeZoneCache: @unchecked Sendable {
    private var zones: [String: TimeZone] = [:]
    public init() {}
    public func zone(_ name: String) throws -> TimeZone {
        if let z = zones[name] { return z }
        let z = try TimeZone.load(name)
        zones[name] = z
        return z
    }
}
