/// Everything judgement keeps about one subject (behaviour §4): its last judged
/// fix, its non-neutral stays, and the local day each condition last notified
/// it. Subjects never share state, so subjects can be judged in any order, or
/// in separate tasks, with the same results.
public struct SubjectState: Equatable, Sendable {
    public var subjectId: String
    public var lastFix: Fix?
    /// How many fixes of this subject have been judged (stale and dropped
    /// ones do not count): the clock a stored streak grows by.
    public var judgedFixes = 0
    public var stays = StayMap()
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
}

/// Why a fix did not count, or a transition did not notify (`--explain`).
public struct Explanation: Equatable, Sendable {
    public var subjectId: String
    public var ts: Timestamp
    public var areaId: String?
    public var conditionId: Int64?
    public var kind: String
    public var reason: String
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

/// Judges fixes of one subject, in time order, against a catalog.
public struct SubjectJudge {
    public let catalog: JudgeCatalog
    public let explain: Bool
    public private(set) var counters = JudgeCounters()
    public private(set) var explanations: [Explanation] = []

    /// Drops fixes the device would not have reported; nil judges every fix.
    public var fixFilter: FixFilter?

    public init(catalog: JudgeCatalog, explain: Bool = false, fixFilter: FixFilter? = nil) {
        self.catalog = catalog; self.explain = explain; self.fixFilter = fixFilter
    }

    /// Applies one fix to `state`; returns its notifications ordered by area_id, then condition_id.
    public mutating func judge(_ fix: Fix, _ state: inout SubjectState) throws -> [Notification] {
        guard admit(fix, &state) else { return [] }
        // Areas the fix may be inside, plus every area with a stay under way:
        // an exit must be seen even from a fix far outside the index's reach.
        // Both in area_id order, merged as they come: stays before `next` are
        // done, and a stay is inserted or removed only at `next`.
        var next = 0
        var out: [Notification] = []
        try catalog.forEachCandidate(at: fix.position) { id, area, hint in
            while next < state.stays.count && state.stays.key(at: next) < id {
                next = try judgeStay(fix, at: next, &state, &out)
            }
            let hasStay = next < state.stays.count && state.stays.key(at: next) == id
            next = try judge(fix, id, area, hint: hint, slot: next, hasStay: hasStay, &state, &out)
        }
        while next < state.stays.count {
            next = try judgeStay(fix, at: next, &state, &out)
        }
        state.lastFix = fix
        return out
    }

    /// Whether the fix is to be judged: not stale, not dropped by the fix
    /// filter. Counts it either way.
    mutating func admit(_ fix: Fix, _ state: inout SubjectState) -> Bool {
        if let last = state.lastFix, fix.ts <= last.ts {
            counters.stale += 1
            note(fix, nil, nil, "stale", "not after the last judged fix at \(last.ts.iso8601)")
            return false
        }
        switch fixFilter?.drop(fix, after: state.lastFix) {
        case .accuracy(let limit)?:
            counters.droppedAccuracy += 1
            note(fix, nil, nil, "dropped", "accuracy \(JSONValue.numberText(fix.accuracy)) m is worse than the requested tier \(JSONValue.numberText(limit)) m")
            return false
        case .distance(let d, let limit)?:
            counters.droppedDistance += 1
            note(fix, nil, nil, "dropped", "\(JSONValue.numberText((d * 100).rounded() / 100)) m from the last fix, under the distance filter \(JSONValue.numberText(limit)) m")
            return false
        case nil:
            break
        }
        counters.judged += 1
        state.judgedFixes += 1
        return true
    }

    /// Judges the area of the stay at `slot`, which is not among the fix's
    /// candidates: the fix is outside its box (or its masks), so not inside
    /// its shape, and no containment test is needed, only the margin's.
    mutating func judgeStay(_ fix: Fix, at slot: Int, _ state: inout SubjectState, _ out: inout [Notification]) throws -> Int {
        let id = state.stays.key(at: slot)
        return try catalog.withArea(id) { try judge(fix, id, $0, hint: .notCandidate, slot: slot, hasStay: true, &state, &out) }
    }

    /// Applies the fix to one area: its verdict, the stay's transition, the
    /// conditions that fire and pass their filters. `slot` is the stay's
    /// position in `state.stays` if `hasStay`, else where a new one goes (the
    /// merge knows both, so the many candidates without a stay cost no
    /// search). `hint`: what the catalog's index already knows of the area.
    /// Returns the position after this area's stay.
    mutating func judge(_ fix: Fix, _ id: String, _ found: JudgedArea?, hint: CandidateHint = .none, slot: Int, hasStay: Bool,
                                _ state: inout SubjectState, _ out: inout [Notification]) throws -> Int {
        // The commonest case in a dense centre: a fix inside a plain area the
        // subject is already INSIDE. The streak grows and nothing else
        // happens, decided without reading the area.
        if hint.inside && hint.plain && hasStay && !explain && state.stays[at: slot].phase == .inside {
            _ = state.stays[at: slot].apply(.inside, inConfirm: 1, outConfirm: 1, at: fix.ts)
            return slot + 1
        }
        // Lent, not retained: a retain is a write to the area, which the
        // other judging thread may be using too. (A `guard let` of the area
        // retained it, and so does `??` with the area in its right side.)
        guard let lent = found.map(Unmanaged.passUnretained) else {
            if hasStay { state.stays.remove(at: slot) }
            return slot
        }
        // nil outside the area's validity period.
        let judged = lent._withUnsafeGuaranteedRef { area in
            area.isValid(at: fix.ts) ? area.rule.verdict(area.shape, at: fix.position, accuracy: fix.accuracy, knownInside: hint.inside,
                                                        knownOutside: hint.outside) : nil
        }
        guard let verdict = judged else {
            if hasStay { note(fix, id, nil, "ignored", "outside the area's validity period") }
            return hasStay ? slot + 1 : slot
        }
        // Most candidates: no stay and not inside. Counting that verdict from
        // UNKNOWN leaves a neutral stay, which is not kept (behaviour §4), and no
        // condition can fire; only an undecided one may need explaining.
        if !hasStay && (verdict == .outside || (verdict == .undecided && !explain)) { return slot }
        return count(fix, id, .lent(lent), lent._withUnsafeGuaranteedRef { CountingRules($0) }, verdict, slot: slot, hasStay: hasStay, &state, &out)
    }

    /// Counts a verdict in the stay at `slot` (a new one if not `hasStay`),
    /// keeping the stay if it is not neutral; returns the position after it.
    /// The stay is counted in place: a subject inside a dozen areas updates
    /// a dozen stays per fix, and a copy out and back of each was a
    /// measurable part of judging.
    /// `area` is read only for conditions or an explanation.
    mutating func count(_ fix: Fix, _ id: String, _ area: AreaLookup, _ rules: CountingRules, _ verdict: Verdict,
                        slot: Int, hasStay: Bool, orderKey: Int = -1, _ state: inout SubjectState, _ out: inout [Notification]) -> Int {
        if hasStay {
            if countVerdict(fix, id, area, rules, verdict, &state.stays[at: slot], &state.lastNotifiedDay, &out) { return slot + 1 }
            state.stays.remove(at: slot)
            return slot
        }
        var stay = StayState()
        guard countVerdict(fix, id, area, rules, verdict, &stay, &state.lastNotifiedDay, &out) else { return slot }
        state.stays.insert(id, stay, at: slot, orderKey: orderKey)
        return slot + 1
    }

    /// Counts a verdict in a stay, and notifies what it makes due; returns
    /// whether the stay is to be kept (not neutral). Reads the area itself
    /// only for its conditions or an explanation.
    private mutating func countVerdict(_ fix: Fix, _ id: String, _ area: AreaLookup, _ rules: CountingRules, _ verdict: Verdict,
                                _ stay: inout StayState, _ lastNotifiedDay: inout [Int64: Int], _ out: inout [Notification]) -> Bool {
        let transition = stay.apply(verdict, inConfirm: rules.inConfirm, outConfirm: rules.outConfirm, at: fix.ts)
        if !rules.hasConditions && !explain {
            if transition != nil { counters.transitions += 1 }
            return !stay.isNeutral
        }
        return area.area._withUnsafeGuaranteedRef { notify(fix, id, $0, verdict, transition, &stay, &lastNotifiedDay, &out) }
    }

    /// `countVerdict`'s part that reads the area: explanations and conditions.
    private mutating func notify(_ fix: Fix, _ id: String, _ area: JudgedArea, _ verdict: Verdict, _ transition: StayState.Transition?,
                                 _ stay: inout StayState, _ lastNotifiedDay: inout [Int64: Int], _ out: inout [Notification]) -> Bool {
        if explain { explainVerdict(fix, area, verdict, stay, transition) }
        if area.conditions.isEmpty {
            if transition != nil { counters.transitions += 1 }
            return !stay.isNeutral
        }
        // Due conditions by their index in the area's list: a transition
        // notifies at every fix that makes one, and copying each condition
        // (its strings retained) cost more than deciding it.
        var due: [(index: Int, timing: ConditionDefinition.Timing)] = []
        if let transition {
            counters.transitions += 1
            let timing: ConditionDefinition.Timing = transition == .enter ? .IN : .OUT
            for k in transition == .enter ? area.inConditions : area.outConditions { due.append((k, timing)) }
        }
        // DWELL after the fix's own transition: at T = 0 it fires with the ENTER.
        if !area.dwellConditions.isEmpty, stay.phase == .inside, let entered = stay.enteredAt {
            for d in area.dwellConditions where !stay.dwellSpent.contains(d.conditionId) {
                if let dwell = d.micros, fix.ts.microseconds - entered.microseconds >= dwell {
                    stay.dwellSpent.append(d.conditionId)
                    due.append((d.index, .DWELL))
                }
            }
        }
        if !due.isEmpty { notifyDue(fix, id, area.conditions, due, &lastNotifiedDay, &out) }
        return !stay.isNeutral
    }

    /// The due conditions of one area, by condition_id: each notifies unless a filter blocks it.
    private mutating func notifyDue(_ fix: Fix, _ id: String, _ conditions: [(ConditionDefinition, TimeZone)],
                                    _ due: [(index: Int, timing: ConditionDefinition.Timing)],
                                    _ lastNotifiedDay: inout [Int64: Int], _ out: inout [Notification]) {
        let ordered = due.count < 2 ? due : due.sorted { conditions[$0.index].0.conditionId < conditions[$1.index].0.conditionId }
        // One local time per zone: an area's conditions mostly share its zone.
        var zone: TimeZone?
        var local = LocalTime?.none
        for (k, timing) in ordered {
            let tz = conditions[k].1
            if zone !== tz || local == nil { zone = tz; local = tz.local(fix.ts) }
            guard let local else { continue }
            let c = conditions[k].0
            switch ConditionFilter.check(c, local: local, lastNotifiedDay: lastNotifiedDay[c.conditionId]) {
            case .pass:
                lastNotifiedDay[c.conditionId] = local.day
                counters.notifications += 1
                out.append(Notification(subjectId: fix.subjectId, ts: fix.ts, areaId: id, conditionId: c.conditionId,
                                        transition: timing, lat: fix.position.lat, lon: fix.position.lon, accuracy: fix.accuracy))
            case .blocked(let why):
                counters.filtered += 1
                note(fix, id, c.conditionId, "not notified", "\(timing.rawValue): \(why)")
            }
        }
    }

    /// Counts an invalid fix (it changes no state).
    public mutating func reject(subjectId: String, ts: Timestamp?, _ why: InvalidFix) {
        counters.invalid += 1
        if explain {
            explanations.append(Explanation(subjectId: subjectId, ts: ts ?? Timestamp(microseconds: 0), areaId: nil,
                                            conditionId: nil, kind: "invalid", reason: why.reason))
        }
    }

    private mutating func note(_ fix: Fix, _ area: String?, _ condition: Int64?, _ kind: String, _ reason: String) {
        guard explain else { return }
        explanations.append(Explanation(subjectId: fix.subjectId, ts: fix.ts, areaId: area, conditionId: condition, kind: kind, reason: reason))
    }

    private mutating func explainVerdict(_ fix: Fix, _ area: JudgedArea, _ v: Verdict, _ stay: StayState, _ t: StayState.Transition?) {
        let id = area.definition.areaId
        switch v {
        case .undecided:
            let inside = area.shape.contains(fix.position)
            let limit = inside ? area.rule.inAccuracyMax : area.rule.outAccuracyMax
            if let limit, fix.accuracy > limit {
                note(fix, id, nil, "not counted", "accuracy \(fix.accuracy) m above the \(inside ? "IN" : "OUT") limit \(limit) m")
            } else {
                note(fix, id, nil, "not counted", "undecided: the error circle (k·accuracy = \(CEP.factor(area.rule.confidence) * fix.accuracy) m) straddles the boundary")
            }
        case .inside where t == nil && stay.phase != .inside:
            note(fix, id, nil, "counting", "inside \(stay.inStreak) of \(area.definition.inConfirmCount)")
        case .outside where t == nil && stay.phase == .inside:
            note(fix, id, nil, "counting", "outside \(stay.outStreak) of \(area.definition.outConfirmCount)")
        default:
            break
        }
    }
}

/// Where counting finds an area when it needs more than its counting rules:
/// lent by the caller, or the slot of a plan's area, read only then (the
/// slots are by area, far apart in memory). Unretained either way: a
/// closure capturing the plan's areas retained them at every count.
enum AreaLookup {
    case lent(Unmanaged<JudgedArea>)
    case planned(Unmanaged<PlannedAreas>, Int)

    var area: Unmanaged<JudgedArea> {
        switch self {
        case .lent(let a): a
        case .planned(let p, let i): p._withUnsafeGuaranteedRef { $0.slots[i].area }
        }
    }
}
