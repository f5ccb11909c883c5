extension CandidateGrid {
    /// `forEachCandidate(at:)` over areas listed by grid index, some not yet
    /// there: `present` gets each candidate whose area `areas` holds (lent,
    /// no reference counting: the caller keeps the areas alive), `missing`
    /// the index of each other candidate. Here, in this module, the grid's
    /// walk is inlined; a caller in another module calling the walk itself
    /// paid a call and a closure per candidate for it.
    public func forEachCandidate(at p: LonLat, in areas: UnsafeBufferPointer<Unmanaged<JudgedArea>?>,
                                 present: (Int, JudgedArea) -> Void, missing: (Int) -> Void) {
        forEachCandidate(at: p, skippingOutside: false) { i, _ in
            if let a = areas[i] { a._withUnsafeGuaranteedRef { present(i, $0) } } else { missing(i) }
        }
    }
}
