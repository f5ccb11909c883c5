/// Geodesic distance from a fix to a prepared shape's boundary
/// (EdgeDistance.swift explains the method).
///
/// What the index adds: only the edges near the fix are offered. Latitude
/// bands are visited outward from the fix's own, nearer gap first, and the
/// walk stops once a band's latitude gap alone exceeds the reach of the best
/// so far: an edge's frame distance is at least the gap to the nearest band
/// it is listed in.
extension PreparedShape: AreaGeometry {
    /// Unsigned geodesic distance in metres from the fix to the boundary.
    public func boundaryDistance(from fix: FixFrame) -> Double {
        if let c = circle { return abs(c.radiusM - Geodesy.distance(c.center, fix.p)) }
        guard edgeCount > 0 else { return .infinity }
        return EdgeDistance.withCandidates { near in
            offerNearEdges(fix, &near)
            if near.best.isFinite && !fix.trusts(near.best) { return farDistance(fix) }
            return EdgeDistance.resolve(near, fix, edge: { edge($0) }) { visit in
                for i in 0..<edgeCount where !isCut(i) { visit(i, edge(i)) }
            }
        }
    }

    /// Whether the fix is at least `threshold` metres from the boundary.
    /// Cheaper than `boundaryDistance`: the frame estimate decides unless the
    /// answer is within its error band, and only then is the exact distance computed.
    public func isAtLeast(_ threshold: Double, from fix: FixFrame) -> Bool {
        if threshold <= 0 { return true }
        if circle != nil { return boundaryDistance(from: fix) >= threshold }
        let best = EdgeDistance.withCandidates { near in
            offerNearEdges(fix, &near)
            return near.best
        }
        return fix.decides(best, atLeast: threshold) ?? (boundaryDistance(from: fix) >= threshold)
    }

    @inline(__always)
    func edge(_ i: Int) -> Edge { Edge(edges[4 * i], edges[4 * i + 1], edges[4 * i + 2], edges[4 * i + 3]) }

    /// The distance by `EdgeDistance.FarSearch`, offered the bands outward
    /// from the fix's until a band's latitude gap alone puts it beyond the
    /// least upper bound: every edge not yet offered lies wholly beyond that
    /// gap, and no point is nearer than its latitude difference allows.
    private func farDistance(_ fix: FixFrame) -> Double {
        var far = EdgeDistance.FarSearch(fix)
        var seen = Set<Int32>()
        let p = fix.p
        let perDegree = SphereBounds.lowPerDegree
        func visit(_ b: Int) {
            for m in Int(bandStarts[b])..<Int(bandStarts[b + 1]) {
                let i = bandEdges[m]
                if !isCut(Int(i)) && seen.insert(i).inserted { far.offer(edge(Int(i))) }
            }
        }
        let home = clampedIndex((p.lat - bandMinLat) / bandHeight, bandCount)
        visit(home)
        var below = home - 1, above = home + 1
        while below >= 0 || above < bandCount {
            let gapBelow = below >= 0 ? (p.lat - (bandMinLat + Double(below + 1) * bandHeight)) * perDegree : .infinity
            let gapAbove = above < bandCount ? (bandMinLat + Double(above) * bandHeight - p.lat) * perDegree : .infinity
            if gapBelow <= gapAbove {
                if gapBelow > far.upper { break }
                visit(below); below -= 1
            } else {
                if gapAbove > far.upper { break }
                visit(above); above += 1
            }
        }
        return far.resolve()
    }

    private func offerNearEdges(_ fix: FixFrame, _ near: inout EdgeDistance.Candidates) {
        let p = fix.p
        func visit(_ b: Int) {
            for m in Int(bandStarts[b])..<Int(bandStarts[b + 1]) {
                let i = Int(bandEdges[m])
                if !isCut(i) { near.offer(edge(i), id: i, fix) }
            }
        }
        let home = clampedIndex((p.lat - bandMinLat) / bandHeight, bandCount)
        visit(home)
        var below = home - 1, above = home + 1
        while below >= 0 || above < bandCount {
            let gapBelow = below >= 0 ? (p.lat - (bandMinLat + Double(below + 1) * bandHeight)) * fix.k.lat : .infinity
            let gapAbove = above < bandCount ? (bandMinLat + Double(above) * bandHeight - p.lat) * fix.k.lat : .infinity
            if gapBelow <= gapAbove {
                if gapBelow > near.reach { break }
                visit(below); below -= 1
            } else {
                if gapAbove > near.reach { break }
                visit(above); above += 1
            }
        }
    }
}
