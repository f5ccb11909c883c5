/// Whether a condition may notify at a fix's local time (behaviour §5): weekday,
/// daily window, date period and re-notification suppression, all in the
/// condition's zone (its own, else the area's, else the database default).
public enum ConditionFilter {
    public enum Outcome: Equatable, Sendable {
        case pass
        case blocked(Block)
    }

    /// What blocked a condition, with the values its explanation names. Kept
    /// as values and written as text only when asked (`description`): a
    /// judgement without --explain blocks conditions at many fixes and never
    /// reads why.
    public enum Block: Equatable, Sendable, CustomStringConvertible {
        case weekday(Int, not: Weekdays)
        case window(minute: Int, start: Int?, end: Int?)
        case beforeStart(day: Int, start: Int)
        case afterEnd(day: Int, end: Int)
        /// `until` is nil when the last day plus the suppression is past any storable date.
        case suppressed(days: Int, last: Int, until: Int?)

        public var description: String {
            switch self {
            case .weekday(let d, let w):
                return "weekday \(Weekdays.names[d]) not in \(w)"
            case .window(let m, let s, let e):
                return "local time \(ConditionDefinition.formatTime(m)) outside the window "
                    + "\(s.map(ConditionDefinition.formatTime) ?? "")–\(e.map(ConditionDefinition.formatTime) ?? "")"
            case .beforeStart(let day, let s):
                return "local date \(ConditionDefinition.formatDate(day)) before the period start \(ConditionDefinition.formatDate(s))"
            case .afterEnd(let day, let e):
                return "local date \(ConditionDefinition.formatDate(day)) after the period end \(ConditionDefinition.formatDate(e))"
            case .suppressed(let n, let last, nil):
                return "suppressed for \(n) days (notified \(ConditionDefinition.formatDate(last)))"
            case .suppressed(_, let last, let until?):
                return "suppressed until \(ConditionDefinition.formatDate(until)) (notified \(ConditionDefinition.formatDate(last)))"
            }
        }
    }

    /// `lastNotifiedDay` is the local day this condition last notified this subject.
    public static func check(_ c: ConditionDefinition, local: LocalTime, lastNotifiedDay: Int?) -> Outcome {
        if let w = c.weekdays, !w.contains(local.weekday) { return .blocked(.weekday(local.weekday, not: w)) }
        let m = local.minuteOfDay
        if !inWindow(m, start: c.startMinute, end: c.endMinute) {
            return .blocked(.window(minute: m, start: c.startMinute, end: c.endMinute))
        }
        if let s = c.startDay, local.day < s { return .blocked(.beforeStart(day: local.day, start: s)) }
        if let e = c.endDay, local.day > e { return .blocked(.afterEnd(day: local.day, end: e)) }
        // Days of storable dates, so the difference cannot overflow; `n` may be
        // any integer a catalog holds, so the end date is formed only when it fits.
        if let n = c.renotifySuppressDays, n > 0, let last = lastNotifiedDay, local.day - last < n {
            let (until, overflow) = last.addingReportingOverflow(n)
            let storable = !overflow && until <= CivilDate.toDays(99_999, 12, 31)
            return .blocked(.suppressed(days: n, last: last, until: storable ? until : nil))
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
