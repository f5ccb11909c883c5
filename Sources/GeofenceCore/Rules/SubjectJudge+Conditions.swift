/// Stage 4 of judging a fix (behaviour §5): the conditions a transition, or
/// a stay's length, makes due, each notifying unless a filter blocks it;
/// and the reasons `--explain` gives for a verdict that did not count.
extension SubjectJudge {
    /// `countVerdict`'s part that reads the area: explanations and conditions.
    mutating func notify(_ fix: Fix, _ id: String, _ area: JudgedArea, _ verdict: Verdict, _ transition: StayState.Transition?,
                         _ stay: inout StayState, _ lastNotifiedDay: inout [Int64: Int], _ out: inout [Notification]) -> Bool {
        if explain { explainVerdict(fix, area, verdict, stay, transition) }
        if area.conditions.isEmpty {
            if transition != nil { counters.transitions += 1 }
            return !stay.isNeutral
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
