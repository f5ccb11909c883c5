/// Judging a fix whose candidates and verdicts a `CandidatePlan` already
/// worked out: what `judge(_:_:)` does, with the same results, reading only
/// the plan's entries, the subject's stays and the packed counts of
/// `PlannedAreas`; an area itself only for conditions, or for a stay the
/// fix left whose verdict outside the shape needs the area's rules.
///
/// Stays and candidates are merged by order keys (`StayMap.orderKey(at:)`,
/// `CandidateGrid.orderKey`), integers, where `judge(_:_:)` compares
/// area_id strings.
extension SubjectJudge {
    public mutating func judge(_ fix: Fix, _ state: inout SubjectState, plan entries: UnsafeBufferPointer<UInt32>,
                               areas: PlannedAreas) throws -> [Notification] {
        // A plan keeps no reasons: explanations are worked out where they are given.
        if explain { return try judge(fix, &state) }
        guard admit(fix, &state) else { return [] }
        state.stays.fillOrderKeys { areas.grid.orderKey(of: $0) }
        var next = 0
        var out: [Notification] = []
        for e in entries {
            let (i, code) = CandidatePlan.decode(e)
            let key = 2 * i + 1
            while next < state.stays.count && state.stays.orderKey(at: next) < key {
                next = try judgeStay(fix, at: next, areas, &state, &out)
            }
            let hasStay = next < state.stays.count && state.stays.orderKey(at: next) == key
            next = judge(fix, i, code, areas, slot: next, hasStay: hasStay, &state, &out)
        }
        while next < state.stays.count {
            next = try judgeStay(fix, at: next, areas, &state, &out)
        }
        state.lastFix = fix
        return out
    }

    /// One planned candidate (grid index `i`). Its counts are read only
    /// past the commonest case, a stay inside a plain area: they are by
    /// area, far apart in memory, and reading an area's data for every
    /// candidate was a third of this judging's time.
    private mutating func judge(_ fix: Fix, _ i: Int, _ code: CandidatePlan.Code, _ areas: PlannedAreas, slot: Int, hasStay: Bool,
                                _ state: inout SubjectState, _ out: inout [Notification]) -> Int {
        let verdict: Verdict
        switch code {
        case .outsideValidity:
            return hasStay ? slot + 1 : slot
        case .insidePlain:
            // As in `judge(_:_:)`: the streak of a stay already INSIDE grows.
            if hasStay && state.stays[at: slot].phase == .inside {
                _ = state.stays[at: slot].apply(.inside, inConfirm: 1, outConfirm: 1, at: fix.ts)
                return slot + 1
            }
            verdict = .inside
        case .inside: verdict = .inside
        case .outside: verdict = .outside
        case .undecided: verdict = .undecided
        }
        if !hasStay && verdict != .inside { return slot }
        let rules = areas.rules(i, areas.counts[i])
        // The id is read only where it is used: a new stay's key, or a notification.
        let id = !hasStay || rules.hasConditions ? areas.grid.ids[i] : ""
        return count(fix, id, .planned(Unmanaged.passUnretained(areas), i), rules, verdict, slot: slot, hasStay: hasStay, orderKey: 2 * i + 1,
                     &state, &out)
    }

    /// The stay at `slot`, whose area is not among the fix's candidates, so
    /// the fix is not inside it.
    private mutating func judgeStay(_ fix: Fix, at slot: Int, _ areas: PlannedAreas,
                                    _ state: inout SubjectState, _ out: inout [Notification]) throws -> Int {
        let key = state.stays.orderKey(at: slot)
        // An area the grid does not have is looked up by id, as ever.
        guard key & 1 == 1 else { return try judgeStay(fix, at: slot, &state, &out) }
        let i = key >> 1, c = areas.counts[i]
        let id = state.stays.key(at: slot)
        if c.outsideIsPlainArea {
            return count(fix, id, .planned(Unmanaged.passUnretained(areas), i), areas.rules(i, c), .outside, slot: slot, hasStay: true, &state, &out)
        }
        return try areas.slots[i].area._withUnsafeGuaranteedRef {
            try judge(fix, id, $0, hint: .notCandidate, slot: slot, hasStay: true, &state, &out)
        }
    }
}
