/// Stage 4 of judging a fix (behaviour §5): the conditions a transition, or
/// a stay's length, makes due, each notifying unless a filter blocks it;
/// and the reasons `--explain` gives for a verdict that did not count.
extension SubjectJudge {
    /// `countVerdict`'s part that reads the area (`id`, lent by the caller):
    /// the reason for a verdict that did not confirm a transition (when
    /// explaining), and the conditions that `transition` of `step.stay`, or
    /// the stay's length, makes due. Counts the transition.
    mutating func notify(_ verdict: Verdict, _ transition: StayState.Transition?, _ area: JudgedArea, id: String, _ step: inout Step) {
        if explain { explainVerdict(verdict, transition, area, &step) }
        if area.conditions.isEmpty {
            if transition != nil { counters.transitions += 1 }
            return
        }
        var timing = ConditionDefinition.Timing.IN
        var onTransition: [Int] = []
        if let transition {
            counters.transitions += 1
            timing = transition == .enter ? .IN : .OUT
            onTransition = transition == .enter ? area.inConditions : area.outConditions
        }
        // DWELL after the fix's own transition: at T = 0 it fires with the ENTER.
        var dwell: [Int] = []
        if !area.dwellConditions.isEmpty, step.stay.phase == .inside, let entered = step.stay.enteredAt {
            for d in area.dwellConditions where !step.stay.dwellSpent.contains(d.conditionId) {
                if let micros = d.micros, step.fix.ts.microseconds - entered.microseconds >= micros {
                    step.stay.dwellSpent.append(d.conditionId)
                    dwell.append(d.index)
                }
            }
        }
        // By condition_id: positions in the area's list follow it, and each
        // list is in that order already, so only both together are merged.
        if dwell.isEmpty {
            for k in onTransition { notifyCondition(k, timing, area, id: id, &step) }
        } else {
            let due = (onTransition.map { ($0, timing) } + dwell.map { ($0, ConditionDefinition.Timing.DWELL) }).sorted { $0.0 < $1.0 }
            for (k, t) in due { notifyCondition(k, t, area, id: id, &step) }
        }
    }

    /// One due condition of an area (`k`, its position in the area's list):
    /// it notifies unless a filter blocks it, against the subject's
    /// last-notified day for that condition. Reads the definition only for
    /// a filter (`NotifyingCondition.filtered`) or a suppression: a
    /// condition with neither always passes.
    private mutating func notifyCondition(_ k: Int, _ timing: ConditionDefinition.Timing, _ area: JudgedArea, id: String,
                                          _ step: inout Step) {
        let c = area.notifying[k]
        let local = step.localTime(in: c.zone)
        // Only a suppression reads the day a condition last notified, so only its days are kept.
        let suppresses = c.suppressDays > 0
        if c.filtered || suppresses {
            let last = suppresses ? step.state.lastNotifiedDay[c.conditionId] : nil
            // Read in place: a copy of the definition would retain its strings.
            let outcome = area.conditions.withUnsafeBufferPointer { ConditionFilter.check($0[k].0, local: local, lastNotifiedDay: last) }
            if case .blocked(let why) = outcome {
                counters.filtered += 1
                note(step.fix, id, c.conditionId, "not notified", "\(timing.rawValue): \(why)")
                return
            }
        }
        if suppresses { step.state.lastNotifiedDay[c.conditionId] = local.day }
        counters.notifications += 1
        step.out.append(Notification(subjectId: step.fix.subjectId, ts: step.fix.ts, areaId: id, conditionId: c.conditionId, transition: timing,
                                     lat: step.fix.position.lat, lon: step.fix.position.lon, accuracy: step.fix.accuracy,
                                     localDay: local.day))
    }

    /// Why a verdict counted in `step.stay` did not (yet) change the stay's
    /// phase: an undecided verdict (accuracy above the area's limit, or an
    /// error circle across the boundary), or a streak still short of its
    /// confirm count. Reads the step only; it is `inout` so that it is not
    /// copied: a step passed by value from within the closure that lends
    /// the area is copied whole, at every explained count.
    private mutating func explainVerdict(_ v: Verdict, _ t: StayState.Transition?, _ area: JudgedArea, _ step: inout Step) {
        let fix = step.fix, stay = step.stay
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
