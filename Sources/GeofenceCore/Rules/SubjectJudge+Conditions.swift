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
        // Due conditions by their index in the area's list, not copied (a
        // condition's strings would be retained) until one notifies.
        var due: [(index: Int, timing: ConditionDefinition.Timing)] = []
        if let transition {
            counters.transitions += 1
            let timing: ConditionDefinition.Timing = transition == .enter ? .IN : .OUT
            for k in transition == .enter ? area.inConditions : area.outConditions { due.append((k, timing)) }
        }
        // DWELL after the fix's own transition: at T = 0 it fires with the ENTER.
        if !area.dwellConditions.isEmpty, step.stay.phase == .inside, let entered = step.stay.enteredAt {
            for d in area.dwellConditions where !step.stay.dwellSpent.contains(d.conditionId) {
                if let dwell = d.micros, step.fix.ts.microseconds - entered.microseconds >= dwell {
                    step.stay.dwellSpent.append(d.conditionId)
                    due.append((d.index, .DWELL))
                }
            }
        }
        if !due.isEmpty { notifyDue(due, of: area.conditions, id: id, &step) }
    }

    /// The due conditions of one area (`due` indexes `conditions`, the
    /// area's list), by condition_id: each notifies unless a filter blocks
    /// it, against the subject's last-notified day for that condition.
    private mutating func notifyDue(_ due: [(index: Int, timing: ConditionDefinition.Timing)],
                                    of conditions: [(ConditionDefinition, TimeZone)], id: String, _ step: inout Step) {
        let ordered = due.count < 2 ? due : due.sorted { conditions[$0.index].0.conditionId < conditions[$1.index].0.conditionId }
        // One local time per zone: an area's conditions mostly share its zone.
        var zone: TimeZone?
        var local = LocalTime?.none
        for (k, timing) in ordered {
            let tz = conditions[k].1
            if zone !== tz || local == nil { zone = tz; local = tz.local(step.fix.ts) }
            guard let local else { continue }
            // Read in place: a copy of the definition would retain its strings.
            let conditionId = conditions[k].0.conditionId
            // Only a suppression reads the day a condition last notified, so only its days are kept.
            let suppresses = (conditions[k].0.renotifySuppressDays ?? 0) > 0
            switch ConditionFilter.check(conditions[k].0, local: local, lastNotifiedDay: suppresses ? step.state.lastNotifiedDay[conditionId] : nil) {
            case .pass:
                if suppresses { step.state.lastNotifiedDay[conditionId] = local.day }
                counters.notifications += 1
                step.out.append(Notification(subjectId: step.fix.subjectId, ts: step.fix.ts, areaId: id, conditionId: conditionId, transition: timing,
                                             lat: step.fix.position.lat, lon: step.fix.position.lon, accuracy: step.fix.accuracy,
                                             localDay: local.day))
            case .blocked(let why):
                counters.filtered += 1
                note(step.fix, id, conditionId, "not notified", "\(timing.rawValue): \(why)")
            }
        }
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
