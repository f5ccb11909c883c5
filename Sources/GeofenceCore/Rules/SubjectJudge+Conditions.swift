/// Stage 4 of judging a fix (behaviour §5): the conditions a transition, or
/// a stay's length, makes due, each notifying unless a filter blocks it;
/// and the reasons `--explain` gives for a verdict that did not count.
extension SubjectJudge {
    /// `countVerdict`'s part that reads the area (`id`, lent by the caller):
    /// the reason for a verdict that did not confirm a transition (when
    /// explaining), and the conditions that `transition` of `step.stay`, or
    /// the stay's length, makes due. Counts the transition.
    mutating func notify(_ verdict: Verdict, _ transition: StayState.Transition?, _ area: JudgedArea, id: String, slot: Int32,
                         _ step: inout Step) {
        if explain { explainVerdict(verdict, transition, area, &step) }
        if area.notifying.isEmpty {
            if transition != nil { counters.transitions += 1 }
            return
        }
        var timing = ConditionDefinition.Timing.IN
        var onTransition = 0..<0
        if let transition {
            counters.transitions += 1
            timing = transition == .enter ? .IN : .OUT
            onTransition = transition == .enter ? area.inNotifying : area.outNotifying
        }
        // DWELL after the fix's own transition: at T = 0 it fires with the ENTER.
        var dwell: [Int] = []
        if !area.dwellConditions.isEmpty, step.stay.phase == .inside, let entered = step.stay.enteredAt {
            for (j, d) in area.dwellConditions.enumerated() where !step.stay.dwellSpent.contains(d.conditionId) {
                if let micros = d.micros, step.fix.ts.microseconds - entered.microseconds >= micros {
                    step.stay.dwellSpent.append(d.conditionId)
                    dwell.append(area.dwellNotifying.lowerBound + j)
                }
            }
        }
        // By condition_id: each timing's conditions are in that order
        // already, so only a transition's and DWELL ones together are merged.
        if dwell.isEmpty {
            for n in onTransition { notifyCondition(n, timing, area, id: id, slot: slot, &step) }
        } else {
            let due = (onTransition.map { ($0, timing) } + dwell.map { ($0, ConditionDefinition.Timing.DWELL) })
                .sorted { area.notifying[$0.0].definition < area.notifying[$1.0].definition }
            for (n, t) in due { notifyCondition(n, t, area, id: id, slot: slot, &step) }
        }
    }

    /// One due condition of an area (`n`, its position in `area.notifying`):
    /// it notifies unless a filter blocks it, against the subject's
    /// last-notified day for that condition. Reads the definition only for
    /// a filter (`NotifyingCondition.filtered`) or a suppression: a
    /// condition with neither always passes.
    private mutating func notifyCondition(_ n: Int, _ timing: ConditionDefinition.Timing, _ area: JudgedArea, id: String,
                                          slot: Int32, _ step: inout Step) {
        let c = area.notifying[n]
        let local = step.localTime(in: c.zone)
        // Only a suppression reads the day a condition last notified, so only its days are kept.
        let suppresses = c.suppressDays > 0
        if c.filtered || suppresses {
            let last = suppresses ? step.state.lastNotifiedDay[c.conditionId] : nil
            // Read in place: a copy of the definition would retain its strings.
            let outcome = area.conditions.withUnsafeBufferPointer { ConditionFilter.check($0[c.definition].0, local: local, lastNotifiedDay: last) }
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
                                     localDay: local.day, areaSlot: slot))
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

extension SubjectJudge.Step {
    /// The fix's local time in `zone`, worked out once per zone for the fix.
    mutating func localTime(in zone: Unmanaged<TimeZone>) -> LocalTime {
        if let local, zone._withUnsafeGuaranteedRef({ $0 === local.zone }) { return local.time }
        let made = (zone: zone.takeUnretainedValue(), time: zone._withUnsafeGuaranteedRef { $0.local(fix.ts) })
        local = made
        return made.time
    }
}
