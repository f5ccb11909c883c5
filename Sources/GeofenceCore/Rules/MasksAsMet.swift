/// The masks of a grid read without them (gf_check's session, once it
/// reads the whole index), filled area by area as the session meets each
/// one again, so that a subject staying among the same areas gets what a
/// batch gets from its masks (CandidateGrid+Interior.swift): a fix in a
/// sub-cell wholly inside an area needs no containment test (and, for an
/// area whose inside fixes only lengthen an INSIDE stay, no look at the
/// area), one in a sub-cell wholly outside is left out.
///
///     let masks = MasksAsMet(grid)
///     if masks.meets(area: i) { masks.add(area: i, shape) }   // at each visit of area i
///     masks.forEachCandidate(at: p, skippingOutside: true) { i, knownInside in … }
///
/// Why as met: masking every area up front is what a batch that meets
/// nearly all of them does, on every core; a session meets areas one fix at
/// a time and most of a national catalog never. An area is masked at its
/// second meeting, not its first: masking costs more than reading the area
/// (docs/write-path.md, forty-sixth session), and an area met once (a
/// subject passing by) never repays it. An entry not yet masked is zero,
/// which claims nothing (the candidate is box-tested and judged), so the
/// candidates and verdicts are the same whenever an area is masked.
///
/// One thread only: the session's connection. The masks belong to `grid`
/// (entry positions), and go with it.
final class MasksAsMet {
    let grid: CandidateGrid
    private let outside: UnsafeMutableBufferPointer<UInt64>
    private let inside: UnsafeMutableBufferPointer<UInt64>
    /// Per area (grid index): 0 never met, 1 met once, 2 masked.
    private var meetings: [UInt8]

    init(_ grid: CandidateGrid) {
        self.grid = grid
        outside = .allocate(capacity: grid.entryCount)
        outside.initialize(repeating: 0)
        inside = .allocate(capacity: grid.entryCount)
        inside.initialize(repeating: 0)
        meetings = [UInt8](repeating: 0, count: grid.ids.count)
    }

    deinit { outside.deallocate(); inside.deallocate() }

    /// Counts a meeting of area `i` (its index in `grid`): true at its
    /// second, when the caller is to mask it (`add`).
    @inline(__always)
    func meets(area i: Int) -> Bool {
        guard meetings[i] < 2 else { return false }
        meetings[i] += 1
        return meetings[i] == 2
    }

    /// Masks area `i` in every cell it is listed in.
    func add(area i: Int, _ shape: PreparedShape) {
        grid.writeMasks(ofArea: i, shape, outside: outside, inside: inside)
    }

    /// `grid.forEachCandidate(at:skippingOutside:_:)` with these masks.
    @inline(__always)
    func forEachCandidate(at p: LonLat, skippingOutside: Bool, _ body: (_ index: Int, _ knownInside: Bool) throws -> Void) rethrows {
        try grid.forEachCandidate(at: p, skippingOutside: skippingOutside, outside: UnsafeBufferPointer(outside),
                                  inside: UnsafeBufferPointer(inside), body)
    }
}
