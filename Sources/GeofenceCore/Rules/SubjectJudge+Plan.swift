/// Judging a fix whose candidates and verdicts a `CandidatePlan` already
/// worked out: the same stages as through the catalog, with the same
/// results, reading only the plan's entries, the subject's stays and the
/// packed counts of `PlannedAreas`; an area itself only for conditions, or
/// for a stay the fix left whose verdict outside the shape needs the area's
/// rules.
///
/// Stays and candidates are merged by order keys (`finishStays` with
/// `.order`: `StayMap.orderKey(at:)`, `CandidateGrid.orderKey`), integers,
/// where the catalog's merge compares area_id strings.
extension SubjectJudge {
    /// The whole of a fix's plan: its candidates, in the plan's order (the
    /// areas' order), merged with the subject's stays, each candidate judged
    /// by `judgePlannedCandidate` and each stay that is not a candidate by
    /// `judgePlannedStay` (through `finishStays`). What `judge` does through
    /// the catalog.
    mutating func judgePlan(_ plan: PlannedFix, _ step: inout Step) throws {
        let areas = plan.areas
        step.state.stays.fillOrderKeys { areas.grid.orderKey(of: $0) }
        for e in plan.entries {
            let (i, code) = CandidatePlan.decode(e)
            let hasStay = try finishStays(before: .order(2 * i + 1), planned: areas, &step)
            judgePlannedCandidate(i, code, areas, hasStay: hasStay, &step)
        }
        _ = try finishStays(before: nil, planned: areas, &step)
    }

    /// One candidate of a plan (grid index `i`, its verdict `code` worked
    /// out ahead): what `judgeCandidate` does for a candidate met through
    /// the catalog, with the same rules (`passOutsideValidity`, `counts`).
    /// Its counts are read only past the commonest case, an INSIDE stay
    /// only lengthened: they are by area, far apart in memory.
    private mutating func judgePlannedCandidate(_ i: Int, _ code: CandidatePlan.Code, _ areas: PlannedAreas, hasStay: Bool,
                                                _ step: inout Step) {
        let verdict: Verdict
        switch code {
        case .outsideValidity:
            return passOutsideValidity(hasStay: hasStay, id: areas.grid.ids[i], &step)
        case .insideLengthens:
            if lengthensInsideStreak(hasStay: hasStay, &step) { return }
            verdict = .inside
        case .inside: verdict = .inside
        case .outside: verdict = .outside
        case .undecided: verdict = .undecided
        }
        guard counts(verdict, hasStay: hasStay) else { return }
        let rules = areas.rules(i, areas.counts[i])
        // The id is read only where it is used: a new stay's key, a notification or a reason.
        let id = !hasStay || rules.hasConditions || explain ? areas.grid.ids[i] : ""
        count(verdict, Counted(id: id, lookup: .planned(Unmanaged.passUnretained(areas), i), rules: rules, orderKey: 2 * i + 1),
              hasStay: hasStay, &step)
    }

    /// The stay at `step.next`, whose area is not among the fix's
    /// candidates, so the fix is not inside it.
    mutating func judgePlannedStay(_ areas: PlannedAreas, _ step: inout Step) throws {
        let key = step.state.stays.orderKey(at: step.next)
        // An area the grid does not have is looked up by id, as ever.
        guard key & 1 == 1 else { return try judgeStay(&step) }
        let i = key >> 1, c = areas.counts[i]
        let id = step.state.stays.key(at: step.next)
        if c.outsideIsCertain {
            return count(.outside, Counted(id: id, lookup: .planned(Unmanaged.passUnretained(areas), i), rules: areas.rules(i, c)),
                         hasStay: true, &step)
        }
        try areas.slots[i].area._withUnsafeGuaranteedRef { try judgeCandidate(id, $0, .notCandidate, hasStay: true, &step) }
    }
}

/// Where counting finds an area when it needs more than its counting rules:
/// lent by the caller, or the slot of a plan's area, read only then (the
/// slots are by area, far apart in memory). Unretained either way: a
/// closure capturing the plan's areas would retain them at every count.
enum AreaLookup {
    case lent(Unmanaged<JudgedArea>)
    case planned(Unmanaged<PlannedAreas>, Int)

    var area: Unmanaged<JudgedArea> {
        switch self {
        case .lent(let a): a
        case .planned(let p, let i): p._withUnsafeGuaranteedRef { $0.slots[i].area }
        }
    }

    /// The plan's grid index of the area (`Notification.areaSlot`), -1 when lent.
    var slot: Int32 {
        switch self {
        case .lent: -1
        case .planned(_, let i): Int32(truncatingIfNeeded: i)
        }
    }
}
