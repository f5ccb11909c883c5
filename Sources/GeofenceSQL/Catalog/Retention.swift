import GeofenceCore

/// Retention: how old a notification, an explanation or a run must be for
/// `geofence prune` and `gf_prune` to remove it (docs/operations.md,
/// "Retention").
///
/// A cutoff is an instant; rows before it go. It is written as a date
/// (`2026-10-01`: that day's start in UTC, so the command and the SQL
/// function give the same instant whatever the catalog's default_timezone)
/// or as a date-time with its offset. An age (`30d`, `30 days`) counts back
/// from now, in whole days of 86,400 s.
///
/// A catalog may carry one age per kind of row in gf_settings
/// (`retention_notifications`, …); `geofence prune CATALOG` without a
/// cutoff of its own prunes each kind by its key, and keeps a kind without
/// one. They are settings rows: no schema change carries them.
public enum Retention {
    /// The gf_settings keys, one per kind of row, with what each means.
    public static let keys: [(key: String, help: String)] = [
        ("retention_notifications", "age after which `geofence prune` removes a notification (by its time), e.g. 90d or 90 days; unset: kept"),
        ("retention_explanations", "age after which `geofence prune` removes an explanation (by its fix's time), e.g. 30d; unset: kept"),
        ("retention_runs", "age after which `geofence prune` removes a run row with nothing of it left (by its start), e.g. 365d; unset: kept"),
    ]

    /// The largest age accepted: more days than the storable years hold.
    static let maxDays = 4_000_000

    /// The instant `text` names: a date (its start in UTC) or a date-time
    /// with its offset. Anything else (a bare number, a time without an
    /// offset) is an input error saying what to write instead, for the
    /// caller to name the option or argument it came from.
    public static func cutoff(_ text: String) throws -> Timestamp {
        let trimmed = text.trimmingSpaces
        if let day = CivilDate.parse(trimmed) {
            return Timestamp(microseconds: Int64(day) * 86_400_000_000)
        }
        let b = Array(trimmed.utf8)
        let startsAsDate = b.count > 10 && b[0..<4].allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && b[4] == 0x2D
        guard startsAsDate else {
            throw InputError("must be a date (2026-10-01, its start in UTC) or a date-time with its offset "
                             + "(2026-10-01T00:00:00+09:00), got \(Echo.quoted(text))")
        }
        do { return try Timestamp.parse(trimmed) } catch { throw InputError("\(error)") }
    }

    /// The number of days an age names: `30d`, `30 days` or `1 day`, a
    /// whole number from 0 to `maxDays`; nil for anything else.
    public static func days(_ text: String) -> Int? {
        // The unit is required: a bare `30` could as well be seconds or a year.
        let s = text.trimmingSpaces.lowercased()
        guard let unit = [" days", " day", "days", "day", "d"].first(where: { s.hasSuffix($0) }) else { return nil }
        let digits = s.dropLast(unit.count)
        guard !digits.isEmpty, digits.utf8.count <= 7, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let n = Int(digits), n <= maxDays else { return nil }
        return n
    }

    /// What `days` accepts, for messages.
    public static let ageForm = "a number of days such as 30d or 30 days"

    /// The instant `days` days before `now`, or the earliest storable one.
    public static func cutoff(days: Int, before now: Timestamp) -> Timestamp {
        Timestamp(microseconds: max(now.microseconds - Int64(days) * 86_400_000_000, Timestamp.earliest.microseconds))
    }

    /// The cutoffs the catalog's retention settings give at `now`; a kind
    /// without its key has none (kept). A value that is not an age is an
    /// input error naming the key and the value.
    public static func cutoffs(_ settings: Settings, now: Timestamp) throws -> PruneCutoffs {
        func cutoff(_ key: String) throws -> Timestamp? {
            guard let value = try settings.get(key) else { return nil }
            guard let n = days(value) else {
                throw InputError("must be \(ageForm), got \(Echo.quoted(value)) (set it with `geofence settings DB \(key) 90d`)", field: key)
            }
            return Self.cutoff(days: n, before: now)
        }
        return PruneCutoffs(notifications: try cutoff("retention_notifications"),
                            explanations: try cutoff("retention_explanations"),
                            runs: try cutoff("retention_runs"))
    }
}

/// The instant before which each kind of row goes; nil keeps that kind.
public struct PruneCutoffs: Equatable, Sendable {
    public var notifications: Timestamp?
    public var explanations: Timestamp?
    public var runs: Timestamp?

    public init(notifications: Timestamp?, explanations: Timestamp?, runs: Timestamp?) {
        self.notifications = notifications; self.explanations = explanations; self.runs = runs
    }

    /// One cutoff for all three kinds (`--before`, gf_prune).
    public static func all(_ t: Timestamp) -> PruneCutoffs { PruneCutoffs(notifications: t, explanations: t, runs: t) }

    public var isEmpty: Bool { notifications == nil && explanations == nil && runs == nil }
}
