/// Whether a condition may notify at a fix's local time (behaviour §5): weekday,
/// daily window, date period and re-notification suppression, all in the
/// condition's zone (its own, else the area's, else the database default).
public enum ConditionFilter {
    public enum Outcome: Equatable, Sendable {
        case pass
        case blocked(String)
    }

    /// `lastNotifiedDay` is the local day this condition last notified this subject.
    public static func check(_ c: ConditionDefinition, local: LocalTime, lastNotifiedDay: Int?) -> Outcome {
        if let w = c.weekdays, !w.contains(local.weekday) {
            return .blocked("weekday \(Weekdays.names[local.weekday]) not in \(w)")
        }
        let m = local.minuteOfDay
        if !inWindow(m, start: c.startMinute, end: c.endMinute) {
            return .blocked("local time \(ConditionDefinition.formatTime(m)) outside the window "
                + "\(c.startMinute.map(ConditionDefinition.formatTime) ?? "")–\(c.endMinute.map(ConditionDefinition.formatTime) ?? "")")
        }
        if let s = c.startDay, local.day < s {
            return .blocked("local date \(ConditionDefinition.formatDate(local.day)) before the period start \(ConditionDefinition.formatDate(s))")
        }
        if let e = c.endDay, local.day > e {
            return .blocked("local date \(ConditionDefinition.formatDate(local.day)) after the period end \(ConditionDefinition.formatDate(e))")
        }
        // Days of storable dates, so the difference cannot overflow; `n` may be
        // any integer a catalog holds, so the end date is formed only when it fits.
        if let n = c.renotifySuppressDays, n > 0, let last = lastNotifiedDay, local.day - last < n {
            let (until, overflow) = last.addingReportingOverflow(n)
            guard !overflow, until <= CivilDate.toDays(99_999, 12, 31) else {
                return .blocked("suppressed for \(n) days (notified \(ConditionDefinition.formatDate(last)))")
            }
            return .blocked("suppressed until \(ConditionDefinition.formatDate(until)) (notified \(ConditionDefinition.formatDate(last)))")
        }
        return .pass
    }

    /// Start included, end excluded; start after end wraps midnight; start =
    /// end is all day; a missing end leaves that side open.
    static func inWindow(_ m: Int, start: Int?, end: Int?) -> Bool {
        switch (start, end) {
        case (nil, nil): return true
        case (let s?, nil): return m >= s
        case (nil, let e?): return m < e
        case (let s?, let e?): return s == e || (s < e ? (m >= s && m < e) : (m >= s || m < e))
        }
    }
}
