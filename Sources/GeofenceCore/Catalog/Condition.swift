/// A notification condition (behaviour §5), validated.
public struct ConditionDefinition: Equatable, Sendable {
    public enum Timing: String, Sendable, CaseIterable { case IN, OUT, DWELL }

    public var conditionId: Int64
    public var areaId: String
    public var timing: Timing
    /// Dwell time in seconds; required for DWELL, absent otherwise.
    public var dwellSeconds: Int64?
    /// Local weekdays on which it may fire; nil = every day.
    public var weekdays: Weekdays?
    /// Daily window, local minutes since midnight; start included, end excluded.
    public var startMinute: Int?
    public var endMinute: Int?
    /// Date period, local day numbers (days since 1970-01-01), inclusive.
    public var startDay: Int?
    public var endDay: Int?
    public var renotifySuppressDays: Int?
    public var timezone: String?

    public init(conditionId: Int64, areaId: String, timing: Timing) {
        self.conditionId = conditionId; self.areaId = areaId; self.timing = timing
    }

    /// An area's implied default pair: IN `first`, OUT `first + 1`, nothing
    /// else set (the SQL layer's `ImpliedConditions` reads `first` with the
    /// area's row). `first` is below `Int64.max`.
    public static func impliedPair(area: String, first: Int64) -> (ConditionDefinition, ConditionDefinition) {
        (ConditionDefinition(conditionId: first, areaId: area, timing: .IN), ConditionDefinition(conditionId: first + 1, areaId: area, timing: .OUT))
    }

    /// Spans longer than every storable time (years 0000 to 9999) mean
    /// nothing more, and in microseconds or as a date they would overflow.
    public static let maxDwellSeconds: Int64 = 315_537_897_600
    public static let maxSuppressDays = 3_652_425

    public func validate() throws {
        if conditionId < 1 { throw InputError("must be an integer >= 1, got \(conditionId)", field: "condition_id") }
        if areaId.isEmpty { throw InputError("must not be empty", field: "area_id") }
        switch (timing, dwellSeconds) {
        case (.DWELL, nil): throw InputError("a DWELL condition needs dwell_s", field: "dwell_s")
        case (.DWELL, let s?) where s < 0: throw InputError("must be >= 0, got \(s)", field: "dwell_s")
        case (.DWELL, let s?) where s > Self.maxDwellSeconds:
            throw InputError("must be at most \(Self.maxDwellSeconds) (the seconds of years 0000 to 9999), got \(s)", field: "dwell_s")
        case (.IN, _?), (.OUT, _?): throw InputError("dwell_s is only for DWELL conditions", field: "dwell_s")
        default: break
        }
        if let a = startDay, let b = endDay, b < a { throw InputError("end_date is before start_date", field: "end_date") }
        if let n = renotifySuppressDays, n < 0 { throw InputError("must be >= 0, got \(n)", field: "renotify_suppress_days") }
        if let n = renotifySuppressDays, n > Self.maxSuppressDays {
            throw InputError("must be at most \(Self.maxSuppressDays) (the days of years 0000 to 9999), got \(n)", field: "renotify_suppress_days")
        }
        if let tz = timezone, !TimeZoneNames.isKnown(tz) { throw InputError(TimeZoneNames.unknown(tz), field: "timezone") }
    }

    // MARK: Text forms (CSV, CLI options, the catalog's columns)

    public static func parseTime(_ s: String, field: String) throws -> Int {
        let p = s.split(separator: ":", omittingEmptySubsequences: false)
        guard p.count == 2, p[0].count == 2, p[1].count == 2, let h = Int(p[0]), let m = Int(p[1]),
              (0...23).contains(h), (0...59).contains(m) else {
            throw InputError("expected HH:MM (00:00 to 23:59), got \(Echo.quoted(s))", field: field)
        }
        return h * 60 + m
    }

    public static func formatTime(_ minute: Int) -> String { pad(minute / 60, 2) + ":" + pad(minute % 60, 2) }

    public static func parseDate(_ s: String, field: String) throws -> Int {
        guard let d = CivilDate.parse(s) else { throw InputError("expected a date YYYY-MM-DD, got \(Echo.quoted(s))", field: field) }
        return d
    }

    public static func formatDate(_ day: Int) -> String {
        let (y, m, d) = CivilDate.fromDays(Int64(day))
        return CivilDate.format(y, m, d)
    }
}

/// A set of weekdays, Monday = bit 0 … Sunday = bit 6.
public struct Weekdays: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var bits: UInt8
    public init(bits: UInt8) { self.bits = bits & 0x7F }

    public static let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// `Mon,Tue`, case-insensitive; also full English names.
    public static func parse(_ s: String) throws -> Weekdays {
        if let w = stored(s) { return w }
        var bits: UInt8 = 0
        for part in s.split(separator: ",") {
            let w = part.trimmingCharacters().lowercased()
            guard let i = names.firstIndex(where: { w == $0.lowercased() || (w.count > 3 && fullNames[names.firstIndex(of: $0)!].hasPrefix(w)) }) else {
                throw InputError("unknown weekday \(Echo.quoted(String(part))); use Mon,Tue,Wed,Thu,Fri,Sat,Sun", field: "weekdays")
            }
            bits |= 1 << UInt8(i)
        }
        guard bits != 0 else { throw InputError("empty weekday list", field: "weekdays") }
        return Weekdays(bits: bits)
    }

    /// The form the catalog stores (`description`'s: names as in `names`,
    /// joined by commas), read byte by byte; nil for any other, which the
    /// general parse reads. A catalog's conditions are read at every area's
    /// first touch, where splitting and lowercasing cost more than the query.
    static func stored(_ s: String) -> Weekdays? {
        var s = s
        return s.withUTF8 { b -> Weekdays? in
            guard b.count % 4 == 3 else { return nil }
            var bits: UInt8 = 0
            var at = 0
            while at < b.count {
                guard at == 0 || b[at - 1] == UInt8(ascii: ","),
                      let i = storedNames.firstIndex(where: { $0.0 == b[at] && $0.1 == b[at + 1] && $0.2 == b[at + 2] }) else { return nil }
                bits |= 1 << UInt8(i)
                at += 4
            }
            return Weekdays(bits: bits)
        }
    }

    private static let storedNames: [(UInt8, UInt8, UInt8)] = names.map { n in
        let u = Array(n.utf8)
        return (u[0], u[1], u[2])
    }

    static let fullNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// Monday = 0 … Sunday = 6.
    public func contains(_ weekday: Int) -> Bool { bits & (1 << UInt8(weekday)) != 0 }

    public var description: String {
        Self.names.enumerated().filter { contains($0.offset) }.map(\.element).joined(separator: ",")
    }
}

extension Substring {
    func trimmingCharacters() -> String { String(self).trimmingSpaces }
}
