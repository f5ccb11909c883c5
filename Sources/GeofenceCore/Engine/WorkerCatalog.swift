/// A judging thread's view of the shared catalog: areas it has seen are kept
/// in its own cache, so threads meet at the shared (locked) catalog only for
/// an area's first use. With the index in memory, candidates come as grid
/// indices and the cache is an array by index: no string array and no
/// dictionary lookup per candidate.
final class WorkerCatalog: JudgeCatalog {
    let shared: AreaSource
    /// Areas met by id (a stay's), kept alive by `held`.
    private var areas: [String: Unmanaged<JudgedArea>?] = [:]

    /// By grid index, once the shared catalog has a grid. A seen area is kept
    /// alive by `held` and listed unretained, so visiting a candidate costs
    /// no reference counting: the judging threads meet the same areas, and
    /// each retain and release would be an atomic write to a cache line the
    /// other core also writes.
    private var byIndex: [Seen] = []
    private var held: [JudgedArea] = []
    private enum Seen { case unseen, gone, area(Unmanaged<JudgedArea>, lengthens: Bool) }

    init(_ shared: AreaSource) { self.shared = shared }

    func candidateAreas(at p: LonLat) throws -> [String] { try shared.candidateAreas(at: p) }

    func forget() { areas.removeAll(); byIndex = []; held = [] }

    /// Empties this cache and returns the areas it kept alive
    /// (`BatchEngine.leaveAreasToExit`); `areas` and `byIndex` only point at them.
    func takeAreas() -> Any {
        defer { areas = [:]; byIndex = []; held = [] }
        return held
    }

    /// The shared catalog's generation this cache was filled in.
    private var generation = 0

    /// Prepared areas the shared catalog may hold (`BatchSettings.maxPreparedAreas`).
    var limit = Int.max

    /// Leave out candidates the grid's outside masks show the fix is outside
    /// of. They cannot change a subject that has no stay there, and an area
    /// with a stay is judged from the stays anyway (SubjectJudge); only an
    /// explanation of an undecided fix could tell the difference.
    var skippingOutside = false

    /// Called before each fix, when this thread uses no area: keeps the
    /// shared catalog within `limit` prepared areas, and empties this cache
    /// once the shared one was dropped (by this thread or another), so memory
    /// stays bounded however many subjects a chunk holds. One lock per fix
    /// is small beside the fix's judging.
    private func keepWithinLimit() {
        let g = shared.boundAreas(to: limit)
        if g != generation { forget(); generation = g }
    }

    func area(_ id: String) throws -> JudgedArea? {
        try withArea(id) { $0 }
    }

    /// The area by id, lent: the stays loop of a judge asks for an area this
    /// way at every exit, about once a fix in a busy city, and a retain of an
    /// area the other thread uses too would be a write to a line both cores
    /// want.
    func withArea<R>(_ id: String, _ body: (JudgedArea?) throws -> R) throws -> R {
        if let seen = areas[id] {
            guard let a = seen else { return try body(nil) }
            return try a._withUnsafeGuaranteedRef { try body($0) }
        }
        let a = try shared.area(id)
        if let a { held.append(a) }
        areas[id] = a.map(Unmanaged.passUnretained)
        return try body(a)
    }

    /// Mask each area when it is met again, if the grid has no masks
    /// (`MasksAsMet`): gf_check's session, which meets its areas one fix at
    /// a time and meets the same ones again while its subjects stay.
    var masksAreasAsMet = false
    private var masksAsMet: MasksAsMet?

    func forEachCandidate(at p: LonLat, _ body: (_ id: String, _ area: JudgedArea?, _ hint: CandidateHint) throws -> Void) throws {
        keepWithinLimit()
        // Without a grid the masks of the last one go with it.
        guard let grid = shared.grid else { masksAsMet = nil; return try forEachCandidateByLookup(at: p, body) }
        if byIndex.count != grid.ids.count { byIndex = [Seen](repeating: .unseen, count: grid.ids.count) }
        if masksAreasAsMet && !grid.hasMasks && masksAsMet?.grid !== grid { masksAsMet = MasksAsMet(grid) }
        let masks = grid.hasMasks ? nil : masksAsMet
        func visit(_ i: Int, _ knownInside: Bool) throws {
            let id = grid.ids[i]
            switch byIndex[i] {
            case .area(let a, let lengthens):
                // This visit's mask bits were read before: masking now changes later visits only.
                if let masks, masks.meets(area: i) { a._withUnsafeGuaranteedRef { masks.add(area: i, $0.shape) } }
                try a._withUnsafeGuaranteedRef { try body(id, $0, CandidateHint(inside: knownInside, insideOnlyLengthens: lengthens)) }
            case .gone: try body(id, nil, .none)
            case .unseen:
                let a = try shared.area(id)
                let lengthens = a?.traits.contains(.insideOnlyLengthens) ?? false
                if let a { held.append(a); byIndex[i] = .area(Unmanaged.passUnretained(a), lengthens: lengthens) } else { byIndex[i] = .gone }
                _ = masks?.meets(area: i)
                try body(id, a, CandidateHint(inside: knownInside, insideOnlyLengthens: lengthens))
            }
        }
        if let masks {
            try masks.forEachCandidate(at: p, skippingOutside: skippingOutside, visit)
        } else {
            try grid.forEachCandidate(at: p, skippingOutside: skippingOutside, visit)
        }
    }
}
