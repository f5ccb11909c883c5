/// Everything judgement keeps about one subject (behaviour §4): its last judged
/// fix, its non-neutral stays, and the local day each condition last notified
/// it. Subjects never share state, so subjects can be judged in any order, or
/// in separate tasks, with the same results.
public struct SubjectState: Equatable, Sendable {
    public var subjectId: String
    public var lastFix: Fix?
    /// How many fixes of this subject have been judged (stale and dropped
    /// ones do not count): the clock a stored streak grows by. It stops at
    /// `maxJudgedFixes`, the most a subject record holds exactly (2^53):
    /// a record imported with a count near it stays readable.
    public var judgedFixes = 0
    public static let maxJudgedFixes = 1 << 53
    public var stays = StayMap()
    /// The local day each condition with a suppression last notified this subject (behaviour §5: no other rule reads a day).
    public var lastNotifiedDay: [Int64: Int] = [:]
    public init(subjectId: String) { self.subjectId = subjectId }
}

public struct Notification: Equatable, Sendable {
    public var subjectId: String
    public var ts: Timestamp
    public var areaId: String
    public var conditionId: Int64
    public var transition: ConditionDefinition.Timing
    public var lat: Double
    public var lon: Double
    public var accuracy: Double
    /// The notification's local date in its condition's zone, as days since
    /// 1970-01-01 (the day a suppression counts from, `lastNotifiedDay`):
    /// stored with it, so that gf_last_notified is read from the notifications.
    public var localDay: Int
    /// Where the run's catalog keeps the area (its index in the run's
    /// candidate grid), -1 when judged without one: a hint by which a writer
    /// may keep what it found per area for the run (`OutputKeys`), checked
    /// against `areaId`; not part of the notification's value (`==`).
    public var areaSlot: Int32 = -1

    public static func == (a: Notification, b: Notification) -> Bool {
        a.subjectId == b.subjectId && a.ts == b.ts && a.areaId == b.areaId && a.conditionId == b.conditionId
            && a.transition == b.transition && a.lat == b.lat && a.lon == b.lon && a.accuracy == b.accuracy && a.localDay == b.localDay
    }
}

/// Why a fix did not count, or a transition did not notify (`--explain`).
/// `lat` and `lon` are the position of the fix the reason is about, exactly
/// as judged, so the row can be drawn where it happened; both are nil when
/// that fix has no readable position (an invalid fix whose latitude or
/// longitude is missing, not a number or off the globe).
public struct Explanation: Equatable, Sendable {
    public var subjectId: String
    public var ts: Timestamp
    public var areaId: String?
    public var conditionId: Int64?
    public var kind: String
    public var reason: String
    public var lat: Double?
    public var lon: Double?
}

public struct JudgeCounters: Equatable, Sendable {
    public var judged = 0, stale = 0, invalid = 0, transitions = 0, notifications = 0, filtered = 0
    /// Fixes the device filter dropped (FixFilter): worse than the accuracy tier, closer than the distance filter.
    public var droppedAccuracy = 0, droppedDistance = 0
    public init() {}
    public mutating func add(_ o: JudgeCounters) {
        judged += o.judged; stale += o.stale; invalid += o.invalid
        transitions += o.transitions; notifications += o.notifications; filtered += o.filtered
        droppedAccuracy += o.droppedAccuracy; droppedDistance += o.droppedDistance
    }
}
