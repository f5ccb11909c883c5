/// A small polygonal area answered straight from its SpatiaLite BLOB
/// (`SpatiaLiteBlob.FlatView`): no parsing into arrays, no index, no cache.
///
/// It computes exactly what `PreparedShape` computes for the same polygons,
/// with the same arithmetic: the same bounding-box test and even-odd
/// crossings for containment, the same frame distances offered to the same
/// candidate search and the same exact refinement (EdgeDistance.swift) for
/// distances. Only the order in which edges are met differs, and neither a
/// parity nor a minimum depends on it. UnpreparedPolygonsTests checks the two
/// agree bit for bit on random shapes and fixes; the BLOB fuzzer checks it on
/// whatever it finds.
public struct UnpreparedPolygons: AreaGeometry {
    public let view: SpatiaLiteBlob.FlatView

    public init(_ view: SpatiaLiteBlob.FlatView) { self.view = view }

    public func contains(_ p: LonLat) -> Bool { location(of: p) == .inside }

    public func location(of p: LonLat) -> PointLocation {
        var locator = PointLocator(p)
        guard mayHold(locator) else { return .outside }
        forEachEdge { _, e in locator.visit(e, isBoundary: !e.isPolar) }
        return finish(locator)
    }

    public func boundaryDistance(from fix: FixFrame) -> Double { distance(fix, signed: false) }

    /// One pass for both answers: crossings are counted while edges are offered.
    public func signedDistance(from fix: FixFrame) -> Double { distance(fix, signed: true) }

    public func isAtLeast(_ threshold: Double, from fix: FixFrame) -> Bool {
        if threshold <= 0 { return true }
        let best = EdgeDistance.withCandidates { near in
            _ = offerEdges(fix, &near, countingCrossings: false)
            return near.best
        }
        return fix.decides(best, atLeast: threshold) ?? (boundaryDistance(from: fix) >= threshold)
    }

    /// `signedDistance` straight from a BLOB, or nil where
    /// `FlatView(bytes, maxVertices:)` would be nil.
    ///
    /// Why: the view's vertex check is a pass over every vertex, and so is
    /// the edge walk. Here the walk checks the vertices it reads (when it
    /// reads them all, which is nearly always), and the answer comes from
    /// the checked view only once the check has passed: the walk's arithmetic
    /// on an unchecked vertex (NaN, 1e300) only compares and discards.
    public static func signedDistance(blob bytes: UnsafeRawBufferPointer, maxVertices: Int, from fix: FixFrame) -> Double? {
        guard var view = SpatiaLiteBlob.FlatView(structureOf: bytes, maxVertices: maxVertices) else { return nil }
        return EdgeDistance.withCandidates { near -> Double? in
            var extremes = SpatiaLiteBlob.FlatView.Extremes()
            var locator = UnpreparedPolygons(view).walkEdges(fix, &near, countingCrossings: true, folding: false,
                                                            checking: &extremes, isChecking: true)
            if locator != nil {
                guard view.accept(extremes) else { return nil }
            } else {
                guard view.checkVertices() else { return nil }
                near = EdgeDistance.Candidates(near.buffer)
                locator = UnpreparedPolygons(view).walkEdges(fix, &near, countingCrossings: true, folding: true)
            }
            // The box is known only once the view has accepted the vertices: the location is finished here.
            return UnpreparedPolygons(view).resolve(near, fix, signed: true, location: UnpreparedPolygons(view).finish(locator!))
        }
    }

    private func distance(_ fix: FixFrame, signed: Bool) -> Double {
        EdgeDistance.withCandidates { near in
            let location = finish(offerEdges(fix, &near, countingCrossings: signed))
            return resolve(near, fix, signed: signed, location: location)
        }
    }

    @inline(__always)
    private func resolve(_ near: EdgeDistance.Candidates, _ fix: FixFrame, signed: Bool, location: PointLocation) -> Double {
        if signed && location == .boundary { return 0 }
        let inside = location == .inside
        // Closures, not method references: a reference to a method of this
        // (large) struct is a context on the heap, twice per call.
        let d = EdgeDistance.resolve(near, fix, edge: { edge(at: $0) }, all: { visit in
            forEachEdge { id, e in if !e.isPolar { visit(id, e) } }
        })
        return inside ? d : (signed ? -d : d)
    }

    /// Offers every edge to the search, each vertex put into the frame once;
    /// returns the point's locator (crossings and boundary) when asked to count crossings.
    ///
    /// Two walks: the first takes only edges within ±180° of the fix's
    /// longitude (nearly every edge of every area) and has no call in its
    /// loop, so the loop's values stay in registers; it gives up (nil) on
    /// the first other edge, and the second walk, with the folding and the
    /// ±360° route of `EdgeDistance.frame`, starts over.
    @inline(__always)
    private func offerEdges(_ fix: FixFrame, _ near: inout EdgeDistance.Candidates, countingCrossings: Bool) -> PointLocator {
        if let locator = walkEdges(fix, &near, countingCrossings: countingCrossings, folding: false) { return locator }
        near = EdgeDistance.Candidates(near.buffer)
        return walkEdges(fix, &near, countingCrossings: countingCrossings, folding: true)!
    }

    @inline(__always)
    private func walkEdges(_ fix: FixFrame, _ near: inout EdgeDistance.Candidates, countingCrossings: Bool, folding: Bool) -> PointLocator? {
        var unused = SpatiaLiteBlob.FlatView.Extremes()
        return walkEdges(fix, &near, countingCrossings: countingCrossings, folding: folding, checking: &unused, isChecking: false)
    }

    /// The walk; with `isChecking`, it also gathers the extremes of every
    /// vertex it reads, for `FlatView.accept` (all of them, unless it gives up).
    @inline(__always)
    private func walkEdges(_ fix: FixFrame, _ near: inout EdgeDistance.Candidates, countingCrossings: Bool, folding: Bool,
                           checking extremes: inout SpatiaLiteBlob.FlatView.Extremes, isChecking: Bool) -> PointLocator? {
        let p = fix.p, k = fix.k
        var locator = PointLocator(p)
        var gaveUp = false
        view.forEachRing { offset, count in
            guard count >= 1, !gaveUp else { return }
            var (lon1, lat1) = view.vertex(at: offset)
            if isChecking { extremes.add(SIMD2(lon1, lat1)) }
            guard count >= 2 else { return }
            var y1 = (lat1 - p.lat) * k.lat
            // Offsets that FlatView.init has bounded: no overflow checks.
            var id = offset
            let last = offset &+ 16 &* (count &- 1)
            while id < last {
                let (lon2, lat2) = view.vertex(at: id &+ 16)
                if isChecking { extremes.add(SIMD2(lon2, lat2)) }
                let y2 = (lat2 - p.lat) * k.lat
                // An edge wholly north or south of the reach cannot be offered
                // (its frame distance is at least its latitude gap), nor cross
                // the fix's latitude (the reach is positive, and y has the sign
                // of lat - p.lat); the rest get EdgeDistance.frame's arithmetic,
                // with the latitude part shared by neighbouring edges; wide
                // edges take its ±360° route.
                let reach = near.reach
                // Polar edges are not boundary: counted (they never cross a
                // parallel) but not offered.
                if !((y1 > reach && y2 > reach) || (y1 < -reach && y2 < -reach)) {
                    let e = Edge(lon1, lat1, lon2, lat2)
                    if countingCrossings { locator.visit(e, isBoundary: !e.isPolar) }
                    if e.isPolar { lon1 = lon2; lat1 = lat2; y1 = y2; id = id &+ 16; continue }
                    let dLon = lon1 - p.lon
                    if !folding && dLon.magnitude > 180 { gaveUp = true; return }
                    let ax = folding ? Geodesy.wrapDegrees(dLon) : dLon
                    let bx = ax + (lon2 - lon1)
                    if abs(bx - ax) > 180 {
                        if !folding { gaveUp = true; return }
                        near.offer(e, id: id, fix)
                    } else {
                        near.offerOnce(ax * k.lon, y1, bx * k.lon, y2, id: id, fix)
                    }
                }
                lon1 = lon2; lat1 = lat2; y1 = y2
                id = id &+ 16
            }
        }
        return gaveUp ? nil : locator
    }

    /// Whether the box holds the point in either spelling of ±180.
    @inline(__always)
    private func mayHold(_ locator: PointLocator) -> Bool {
        inBox(locator.q) || locator.east.map(inBox) == true
    }

    /// The location once every edge that may meet the point's parallel has been visited.
    @inline(__always)
    private func finish(_ locator: PointLocator) -> PointLocation {
        if locator.onBoundary { return .boundary }
        return locator.parity && inBox(locator.q) ? .inside : .outside
    }

    /// At latitude ±90 every longitude is the pole: only the latitude counts.
    @inline(__always)
    private func inBox(_ p: LonLat) -> Bool {
        let b = view.boundingBox
        return p.lat >= b.minLat && p.lat <= b.maxLat && (abs(p.lat) == 90 || (p.lon >= b.minLon && p.lon <= b.maxLon))
    }

    /// Every edge, named by the byte offset of its first vertex.
    @inline(__always)
    func forEachEdge(_ body: (Int, Edge) -> Void) {
        view.forEachRing { offset, count in
            guard count >= 2 else { return }
            var (x1, y1) = view.vertex(at: offset)
            for v in 1..<count {
                let (x2, y2) = view.vertex(at: offset + 16 * v)
                body(offset + 16 * (v - 1), Edge(x1, y1, x2, y2))
                x1 = x2; y1 = y2
            }
        }
    }

    @inline(__always)
    func edge(at offset: Int) -> Edge {
        let (x1, y1) = view.vertex(at: offset), (x2, y2) = view.vertex(at: offset + 16)
        return Edge(x1, y1, x2, y2)
    }
}
