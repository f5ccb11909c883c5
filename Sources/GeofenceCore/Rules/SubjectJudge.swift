/// Judges fixes of one subject, in time order, against a catalog: one fix
/// goes through four stages (behaviour §3–§5). Each stage's rule is a type
/// of its own with its contract; this struct is the pipeline that feeds
/// one into the next, subject by subject.
///
///     var judge = SubjectJudge(catalog: catalog)
///     var state = SubjectState(subjectId: "u1")
///     let notified = try judge.judge(fix, &state)          // or: plan: PlannedFix(entries, areas)
///
/// | stage | type (its contract) | here |
/// |---|---|---|
/// | 1. candidates: the areas the fix may be inside, merged in area order with the subject's stays, so an exit is seen even far from the area | `JudgeCatalog` (`forEachCandidate`), or a `CandidatePlan` worked out ahead | `finishStays` (the merge, once for both kinds of key); one candidate: `judgeCandidate`, or `judgePlannedCandidate` within `judgePlan` (SubjectJudge+Plan.swift) |
/// | 2. verdict: inside, outside or undecided, with the area's accuracy limits, confidence and validity | `VerdictRule`; `AreaTraits` says which short-circuit is safe | `lengthensInsideStreak` (a fix inside an INSIDE stay of an area whose inside fixes only lengthen it), `passOutsideValidity`, `counts` (which verdicts reach stage 3) |
/// | 3. stay update: the verdict counted in the (subject, area) stay, confirming an ENTER or EXIT after its confirm count | `StayState.apply` | `count`, `countVerdict` (on `Step.stay`) |
/// | 4. notify: the conditions the transition (or the stay's length) makes due, each unless a filter blocks it | `ConditionFilter.check` | `notify`, `notifyCondition` (SubjectJudge+Conditions.swift) |
///
/// Every stage takes the `Step` (the fix, the subject's state, the
/// notifications) and besides only what is its own: a candidate, a verdict.
public struct SubjectJudge {
    public let catalog: JudgeCatalog
    public let explain: Bool
    public internal(set) var counters = JudgeCounters()
    public internal(set) var explanations: [Explanation] = []

    /// Drops fixes the device would not have reported; nil judges every fix.
    public var fixFilter: FixFilter?

    public init(catalog: JudgeCatalog, explain: Bool = false, fixFilter: FixFilter? = nil) {
        self.catalog = catalog; self.explain = explain; self.fixFilter = fixFilter
    }

    /// A fix's candidates and verdicts as a `CandidatePlan` worked them out:
    /// its entries, and the areas they index.
    public struct PlannedFix {
        public let entries: UnsafeBufferPointer<UInt32>
        public let areas: PlannedAreas
        public init(_ entries: UnsafeBufferPointer<UInt32>, _ areas: PlannedAreas) { self.entries = entries; self.areas = areas }
    }

    /// One fix on its way through the stages: the fix, its subject's state,
    /// the notifications so far, where the merge of candidates and stays
    /// stands (stays before `next` are done; a stay is inserted or removed
    /// only at `next`), and the stay being counted.
    ///
    /// `stay` is apart from `state.stays` so that counting and notifying can
    /// write the stay, the last-notified days and the notifications through
    /// the one step: while a stay inside `state.stays` is being written,
    /// Swift's exclusivity rule lets nothing else reach the step. So the
    /// stay at `next` is swapped out into `stay` and back (`count`), a move
    /// of its fields, never a copy of its DWELL list. Between counts `stay`
    /// is a new stay (`StayState()`), where a stay the subject does not
    /// have yet starts.
    struct Step {
        let fix: Fix
        var state: SubjectState
        var out: [Notification] = []
        var next = 0
        var stay = StayState()
        /// The fix's local time in the zone asked for last (`localTime(in:)`).
        var local: (zone: TimeZone, time: LocalTime)?
    }

    /// Applies one fix to `state`; returns its notifications ordered by
    /// area_id, then condition_id. With `plan`, the candidates and verdicts
    /// are the plan's (the same as the catalog's, worked out ahead); with
    /// `explain` the reasons are worked out from the plan's areas as the
    /// catalog's would be (a plan made with `skippingOutside: false`).
    public mutating func judge(_ fix: Fix, _ state: inout SubjectState, plan: PlannedFix? = nil) throws -> [Notification] {
        guard admit(fix, &state) else { return [] }
        // The state moves into the step and back, not copied.
        var step = Step(fix: fix, state: SubjectState(subjectId: ""))
        swap(&step.state, &state)
        defer { swap(&step.state, &state) }
        if let plan {
            try judgePlan(plan, &step)
        } else {
            try catalog.forEachCandidate(at: fix.position) { id, area, hint in
                let hasStay = try finishStays(before: .areaId(id), &step)
                try judgeCandidate(id, area, hint, hasStay: hasStay, &step)
            }
            _ = try finishStays(before: nil, &step)
        }
        step.state.lastFix = fix
        return step.out
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
        state.judgedFixes = min(state.judgedFixes + 1, SubjectState.maxJudgedFixes)
        return true
    }

    // MARK: 1. Candidates merged with stays

    /// Where a candidate stands in the merge: its area_id (candidates
    /// through the catalog, compared as the catalog orders them), or its
    /// order key (candidates of a plan, `CandidateGrid.orderKey`, compared
    /// with the stays' `StayMap.orderKey`: integers, not strings).
    enum MergeKey {
        case areaId(String)
        case order(Int)
    }

    /// The merge, written once for both kinds of key: judges on its own
    /// every stay that comes before `key` (every stay left, if nil), the fix
    /// not being among those areas' candidates, so outside their boxes or
    /// masks; returns whether the stay now at `step.next` is `key`'s own.
    /// `planned`: the plan's areas, which then judge those stays.
    mutating func finishStays(before key: MergeKey?, planned: PlannedAreas? = nil, _ step: inout Step) throws -> Bool {
        while step.next < step.state.stays.count {
            switch key {
            case .areaId(let id)?:
                let k = step.state.stays.key(at: step.next)
                if !k.utf8Precedes(id) { return k.hasSameUTF8(as: id) }
            case .order(let o)?:
                let k = step.state.stays.orderKey(at: step.next)
                if k >= o { return k == o }
            case nil:
                break
            }
            if let planned { try judgePlannedStay(planned, &step) } else { try judgeStay(&step) }
        }
        return false
    }

    /// The area of the stay at `step.next`, which is not among the fix's
    /// candidates: the fix is outside its box (or its masks), so not inside
    /// its shape, and no containment test is needed, only the margin's.
    mutating func judgeStay(_ step: inout Step) throws {
        let id = step.state.stays.key(at: step.next)
        try catalog.withArea(id) { try judgeCandidate(id, $0, .notCandidate, hasStay: true, &step) }
    }

    // MARK: 2. Verdict

    /// The short-circuit in front of every verdict: a fix inside an area
    /// with `AreaTraits.insideOnlyLengthens`, whose stay is already INSIDE,
    /// only lengthens the streak (behaviour §4), decided without reading the
    /// area. The commonest case in a dense centre.
    @inline(__always)
    func lengthensInsideStreak(hasStay: Bool, _ step: inout Step) -> Bool {
        guard hasStay, step.state.stays[at: step.next].phase == .inside else { return false }
        _ = step.state.stays[at: step.next].apply(.inside, inConfirm: 1, outConfirm: 1, at: step.fix.ts)
        step.next += 1
        return true
    }

    /// Which verdicts go on to be counted: every one in a stay the subject
    /// has; without a stay only an inside one. Counting an outside verdict
    /// from UNKNOWN leaves a neutral stay, which is not kept (behaviour §4),
    /// and no condition can fire; an undecided one changes nothing, and is
    /// counted only to be explained. Most candidates are without a stay and
    /// not inside, so this is asked before anything else of the area is read.
    @inline(__always)
    func counts(_ verdict: Verdict, hasStay: Bool) -> Bool {
        hasStay || verdict == .inside || (verdict == .undecided && explain)
    }

    /// A candidate outside its area's validity period (behaviour §4): the
    /// fix is not judged against the area, so the subject's stay there, if
    /// any, is left as it is (explained as ignored) and the merge moves past
    /// it. `id` is read only for the explanation: a plan's ids are by area,
    /// far apart in memory.
    @inline(__always)
    mutating func passOutsideValidity(hasStay: Bool, id: @autoclosure () -> String, _ step: inout Step) {
        guard hasStay else { return }
        if explain { note(step.fix, id(), nil, "ignored", "outside the area's validity period") }
        step.next += 1
    }

    /// One candidate area met through the catalog: its verdict, then the
    /// stay's count. `hasStay`: the stay at `step.next` is this area's (the
    /// merge knows, so the many candidates without a stay cost no search).
    /// `hint`: what the catalog's index already knows of the area.
    mutating func judgeCandidate(_ id: String, _ found: JudgedArea?, _ hint: CandidateHint, hasStay: Bool, _ step: inout Step) throws {
        if hint.inside && hint.insideOnlyLengthens && !explain && lengthensInsideStreak(hasStay: hasStay, &step) { return }
        // Lent, not retained: a retain is a write to the area, which the
        // other judging thread may be using too. (A `guard let` of the area
        // retains it, and so does `??` with the area in its right side.)
        guard let lent = found.map(Unmanaged.passUnretained) else {
            if hasStay { step.state.stays.remove(at: step.next) }
            return
        }
        let fix = step.fix
        // nil outside the area's validity period.
        let judged = lent._withUnsafeGuaranteedRef { area in
            area.isValid(at: fix.ts) ? area.rule.verdict(area.shape, at: fix.position, accuracy: fix.accuracy, knownInside: hint.inside,
                                                        knownOutside: hint.outside) : nil
        }
        guard let verdict = judged else { return passOutsideValidity(hasStay: hasStay, id: id, &step) }
        guard counts(verdict, hasStay: hasStay) else { return }
        let area = Counted(id: id, lookup: .lent(lent), rules: lent._withUnsafeGuaranteedRef { CountingRules($0) })
        count(verdict, area, hasStay: hasStay, &step)
    }

    // MARK: 3. Stay update

    /// An area as counting needs it: its id, its counting rules, and where
    /// to find the area itself (read only for conditions or an explanation).
    struct Counted {
        let id: String
        let lookup: AreaLookup
        let rules: CountingRules
        /// The stay's order key if a new one is made (`StayMap.orderKey`); -1: none.
        var orderKey = -1
    }

    /// Counts a verdict in the stay at `step.next` (a new one if not
    /// `hasStay`), keeping the stay if it is not neutral, and moves past it.
    /// The stay is swapped into `step.stay`, counted there and swapped back:
    /// a subject inside a dozen areas updates a dozen stays per fix, none
    /// copied. `step.stay` is left a new stay again.
    mutating func count(_ verdict: Verdict, _ area: Counted, hasStay: Bool, _ step: inout Step) {
        if hasStay { swap(&step.stay, &step.state.stays[at: step.next]) }
        let keep = countVerdict(verdict, area, &step)
        switch (hasStay, keep) {
        case (true, true):
            swap(&step.stay, &step.state.stays[at: step.next])
            step.next += 1
        case (true, false):
            step.state.stays.remove(at: step.next)
            step.stay = StayState()
        case (false, true):
            var made = StayState()
            swap(&made, &step.stay)
            step.state.stays.insert(area.id, made, at: step.next, orderKey: area.orderKey)
            step.next += 1
        case (false, false):
            step.stay = StayState()
        }
    }

    /// Counts a verdict in `step.stay`, and notifies what it makes due;
    /// returns whether the stay is to be kept (not neutral). Reads the area
    /// itself only for an explanation, or for conditions that may come due
    /// (`CountingRules.mayNotify`: a transition, or DWELL ones).
    private mutating func countVerdict(_ verdict: Verdict, _ area: Counted, _ step: inout Step) -> Bool {
        let transition = step.stay.apply(verdict, inConfirm: area.rules.inConfirm, outConfirm: area.rules.outConfirm, at: step.fix.ts)
        if area.rules.mayNotify(transition) || explain {
            area.lookup.area._withUnsafeGuaranteedRef { notify(verdict, transition, $0, id: area.id, slot: area.lookup.slot, &step) }
        } else if transition != nil {
            counters.transitions += 1
        }
        return !step.stay.isNeutral
    }

    // MARK: Invalid fixes and explanations

    /// Counts an invalid fix (it changes no state). Its explanation carries
    /// `position`, the fix's readable position if it has one
    /// (`FixRow.readablePosition`), else none.
    public mutating func reject(subjectId: String, ts: Timestamp?, at position: LonLat?, _ why: InvalidFix) {
        counters.invalid += 1
        if explain {
            explanations.append(Explanation(subjectId: subjectId, ts: ts ?? Timestamp(microseconds: 0), areaId: nil,
                                            conditionId: nil, kind: "invalid", reason: why.reason,
                                            lat: position?.lat, lon: position?.lon))
        }
    }

    /// Records (when explaining) why `fix` did not count or notify, at the fix's
    /// position. The reason is written only then: a judgement without
    /// --explain passes here at every blocked condition and short streak.
    mutating func note(_ fix: Fix, _ area: String?, _ condition: Int64?, _ kind: String, _ reason: @autoclosure () -> String) {
        guard explain else { return }
        explanations.append(Explanation(subjectId: fix.subjectId, ts: fix.ts, areaId: area, conditionId: condition, kind: kind,
                                        reason: reason(), lat: fix.position.lat, lon: fix.position.lon))
    }
}
