/// The stay state of one subject in one area (behaviour §4).
public struct StayState: Equatable, Sendable {
    public enum Phase: String, Sendable { case unknown = "UNKNOWN", inside = "INSIDE", outside = "OUTSIDE" }
    public enum Transition: Equatable, Sendable { case enter, exit }

    public var phase: Phase = .unknown
    public var inStreak = 0
    public var outStreak = 0
    /// When the current stay began (the ENTER fix); nil when not inside.
    public var enteredAt: Timestamp?
    /// DWELL conditions already spent in the current stay (fired or filtered).
    public var dwellSpent: [Int64] = []

    public init() {}

    /// This stay as it would be after `fixes` more judged fixes that each
    /// repeat the last decided verdict: the streak under way (at most one is)
    /// grows by one per fix. A store that keeps this rule needs to write a
    /// stay only when a fix breaks it, not at every fix of a long stay.
    public func continued(by fixes: Int) -> StayState {
        var s = self
        if inStreak > 0 { s.inStreak += fixes } else if outStreak > 0 { s.outStreak += fixes }
        return s
    }

    /// UNKNOWN and OUTSIDE with no inside streak behave alike for every later
    /// transition, so such a state need not be stored.
    public var isNeutral: Bool { phase != .inside && inStreak == 0 }

    /// Counts one verdict; returns the transition it confirms, if any.
    /// UNKNOWN → OUTSIDE is silent: a subject first seen outside has not left.
    public mutating func apply(_ verdict: Verdict, inConfirm: Int, outConfirm: Int, at t: Timestamp) -> Transition? {
        switch verdict {
        case .undecided:
            return nil
        case .inside:
            inStreak = inStreak < Int(Int32.max) ? inStreak + 1 : inStreak
            outStreak = 0
            if inStreak >= inConfirm && phase != .inside {
                phase = .inside; enteredAt = t; dwellSpent = []
                return .enter
            }
        case .outside:
            outStreak = outStreak < Int(Int32.max) ? outStreak + 1 : outStreak
            inStreak = 0
            if outStreak >= outConfirm && phase != .outside {
                let wasInside = phase == .inside
                phase = .outside; enteredAt = nil; dwellSpent = []
                return wasInside ? .exit : nil
            }
        }
        return nil
    }
}
