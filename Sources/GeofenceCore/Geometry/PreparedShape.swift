#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A shape made ready for many point queries: polygon edges flattened into
/// one array and bucketed by latitude band, so a containment test touches only
/// the edges that cross the fix's latitude.
///
/// Semantics (SPEC §1, §3):
/// - Edges are straight lines in lon/lat, as in RFC 7946, GEOS and SpatiaLite.
///   Containment is the even-odd rule over all rings, which for a valid
///   (multi)polygon is GEOS's interior: a point on the boundary is outside.
/// - Distances are geodesic metres on WGS 84 from the fix to the nearest point
///   of the boundary. A first estimate uses the affine frame at the fix (which
///   maps lon/lat-straight edges to straight segments, so it finds the right
///   neighbourhood); the nearest candidates are then refined with exact
///   ellipsoidal distances along each edge.
/// - A shape cut at the antimeridian (parts touching both +180 and -180) is one
///   area: its edges lying along ±180 are not boundary.
public final class PreparedShape: @unchecked Sendable {
    public let shape: Shape
    public let boundingBox: BoundingBox

    // Polygon edges, 4 doubles each: lon1, lat1, lon2, lat2.
    private let edges: [Double]
    // Edge index of the first edge of each ring, plus a final sentinel.
    private let ringStarts: [Int]
    // Per ring: which polygon it belongs to and whether it is that polygon's exterior.
    private let ringIsExterior: [Bool]
    // Edges that lie along a cut at ±180° and are not boundary.
    private let isCutEdge: [Bool]
    // Latitude bands: edges whose latitude span meets band b are bandEdges[bandStarts[b]..<bandStarts[b+1]].
    private let bandMinLat: Double
    private let bandHeight: Double
    private let bandStarts: [Int32]
    private let bandEdges: [Int32]

    public var edgeCount: Int { edges.count / 4 }

    public init(_ shape: Shape) {
        self.shape = shape
        self.boundingBox = shape.boundingBox
        guard case .polygons(let polygons) = shape else {
            edges = []; ringStarts = [0]; ringIsExterior = []; isCutEdge = []
            bandMinLat = 0; bandHeight = 1; bandStarts = [0, 0]; bandEdges = []
            return
        }
        var e: [Double] = []
        var starts: [Int] = []
        var exterior: [Bool] = []
        var touchesEast = false, touchesWest = false
        for poly in polygons {
            for (ri, ring) in poly.rings.enumerated() {
                starts.append(e.count / 4)
                exterior.append(ri == 0)
                let pts = ring.points
                guard pts.count >= 2 else { continue }
                for i in 0..<(pts.count - 1) {
                    e.append(pts[i].lon); e.append(pts[i].lat); e.append(pts[i + 1].lon); e.append(pts[i + 1].lat)
                }
                for p in pts {
                    if p.lon == 180 { touchesEast = true }
                    if p.lon == -180 { touchesWest = true }
                }
            }
        }
        starts.append(e.count / 4)
        let n = e.count / 4
        var cut = [Bool](repeating: false, count: n)
        if touchesEast && touchesWest {
            for i in 0..<n where e[4 * i] == e[4 * i + 2] && abs(e[4 * i]) == 180 { cut[i] = true }
        }
        edges = e; ringStarts = starts; ringIsExterior = exterior; isCutEdge = cut

        // Bands: about four edges per band, at most 4096; fewer when long edges
        // would put one edge into many bands (a comb of tall teeth), so the
        // index stays within 16 entries per edge.
        let bbox = boundingBox
        var bandCount = max(1, min(4096, n / 4))
        var height = 1.0
        var counts: [Int32] = []
        func bandRange(_ i: Int) -> ClosedRange<Int> {
            let lo = min(e[4 * i + 1], e[4 * i + 3]), hi = max(e[4 * i + 1], e[4 * i + 3])
            return clampedIndex((lo - bbox.minLat) / height, bandCount)...clampedIndex((hi - bbox.minLat) / height, bandCount)
        }
        while true {
            height = max((bbox.maxLat - bbox.minLat) / Double(bandCount), 1e-12)
            counts = [Int32](repeating: 0, count: bandCount + 1)
            var total = 0
            for i in 0..<n { let r = bandRange(i); total += r.count; for b in r { counts[b + 1] += 1 } }
            if total <= 16 * n + 64 || bandCount == 1 { break }
            bandCount = max(1, bandCount / 4)
        }
        for b in 0..<bandCount { counts[b + 1] += counts[b] }
        var fill = counts
        var members = [Int32](repeating: 0, count: Int(counts[bandCount]))
        for i in 0..<n { for b in bandRange(i) { members[Int(fill[b])] = Int32(i); fill[b] += 1 } }
        bandMinLat = bbox.minLat; bandHeight = height; bandStarts = counts; bandEdges = members
    }

    // MARK: Containment

    /// True when the point is in the interior (boundary points are outside, as in GEOS).
    public func contains(_ p: LonLat) -> Bool {
        switch shape {
        case .circle(let c):
            return Self.circleContains(c, p)
        case .polygons:
            let b = boundingBox
            guard p.lat >= b.minLat, p.lat <= b.maxLat, p.lon >= b.minLon, p.lon <= b.maxLon else { return false }
            let bandCount = bandStarts.count - 1
            let band = clampedIndex((p.lat - bandMinLat) / bandHeight, bandCount)
            var inside = false
            edges.withUnsafeBufferPointer { e in
                for k in Int(bandStarts[band])..<Int(bandStarts[band + 1]) {
                    let i = Int(bandEdges[k]) * 4
                    let x1 = e[i], y1 = e[i + 1], x2 = e[i + 2], y2 = e[i + 3]
                    if (y1 > p.lat) != (y2 > p.lat) {
                        let x = x1 + (p.lat - y1) * (x2 - x1) / (y2 - y1)
                        if p.lon < x { inside.toggle() }
                    }
                }
            }
            return inside
        }
    }

    /// Clear cases without Vincenty: within a degree of the centre, a flat
    /// frame scaled at the mid-latitude measures the distance to well under
    /// 0.1 %; only a point within 0.5 % + 0.5 m of the circle gets the exact
    /// ellipsoidal distance. (Most judged fixes are nowhere near a boundary.)
    static func circleContains(_ c: Circle, _ p: LonLat) -> Bool {
        let dLat = p.lat - c.center.lat, dLon = Geodesy.wrapDegrees(p.lon - c.center.lon)
        if abs(dLat) < 1, abs(dLon) < 1, abs(c.center.lat) < 85 {
            let m = WGS84.metresPerDegree(atLat: (p.lat + c.center.lat) / 2)
            let x = dLon * m.lon, y = dLat * m.lat
            let d = (x * x + y * y).squareRoot()
            let slack = 0.005 * d + 0.5
            if d < c.radiusM - slack { return true }
            if d > c.radiusM + slack { return false }
        }
        return Geodesy.distance(c.center, p) < c.radiusM
    }

    // MARK: Distance

    /// Signed geodesic distance in metres to the boundary: positive inside.
    public func signedDistance(_ p: LonLat) -> Double {
        let d = boundaryDistance(p)
        return contains(p) ? d : -d
    }

    /// Unsigned geodesic distance in metres from the point to the boundary.
    public func boundaryDistance(_ p: LonLat) -> Double {
        switch shape {
        case .circle(let c):
            return abs(c.radiusM - Geodesy.distance(c.center, p))
        case .polygons:
            let approx = approximateEdgeDistances(p)
            guard let best = approx.min() else { return .infinity }
            let rel = relativeFrameError(p, best)
            let limit = best * (1 + 3 * rel) + 1e-3
            var order = approx.indices.filter { approx[$0] <= limit && !isCutEdge[$0] }
            if order.count > 64 { order.sort { approx[$0] < approx[$1] }; order = Array(order.prefix(64)) }
            var exact = Double.infinity
            for i in order { exact = min(exact, geodesicDistanceToEdge(p, i)) }
            return exact
        }
    }

    /// Whether the point is at least `threshold` metres from the boundary.
    /// Cheaper than `boundaryDistance`: the frame estimate decides unless the
    /// answer is within its error band, and only then is the exact distance computed.
    public func isAtLeast(_ threshold: Double, fromBoundary p: LonLat) -> Bool {
        if threshold <= 0 { return true }
        switch shape {
        case .circle:
            return boundaryDistance(p) >= threshold
        case .polygons:
            var best = Double.infinity
            forEachApproximateEdgeDistance(p) { i, d in if !isCutEdge[i] { best = min(best, d) } }
            let rel = relativeFrameError(p, max(best, threshold))
            if best > threshold * (1 + 3 * rel) + 1e-3 { return true }
            if best < threshold * (1 - 3 * rel) - 1e-3 { return false }
            return boundaryDistance(p) >= threshold
        }
    }

    /// How far the affine frame at the fix can be off, relative to a distance d:
    /// the longitude scale changes by tan φ · Δφ over a latitude offset Δφ ≤ d/R,
    /// plus curvature terms; 1e-4 covers ellipsoid versus frame at short range.
    private func relativeFrameError(_ p: LonLat, _ d: Double) -> Double {
        let x = d / 6_371_000
        let t = abs(tan(min(abs(p.lat), 89.999) * .pi / 180))
        return min(0.5, 1e-4 + x * (1 + t) + x * x)
    }

    private func approximateEdgeDistances(_ p: LonLat) -> [Double] {
        var out = [Double](repeating: .infinity, count: edgeCount)
        forEachApproximateEdgeDistance(p) { i, d in out[i] = d }
        return out
    }

    /// Distance in metres from the fix to each edge in the affine frame at the fix.
    @inline(__always)
    private func forEachApproximateEdgeDistance(_ p: LonLat, _ body: (Int, Double) -> Void) {
        let k = WGS84.metresPerDegree(atLat: p.lat)
        edges.withUnsafeBufferPointer { e in
            for i in 0..<(e.count / 4) {
                let ax = Geodesy.wrapDegrees(e[4 * i] - p.lon)
                let bx = ax + (e[4 * i + 2] - e[4 * i])
                let y1 = (e[4 * i + 1] - p.lat) * k.lat, y2 = (e[4 * i + 3] - p.lat) * k.lat
                var d = Self.originToSegment(ax * k.lon, y1, bx * k.lon, y2)
                if abs(bx - ax) > 180 {
                    // An edge over half the globe wide (a parallel round a pole cap)
                    // may pass the fix's meridian one turn over: its copies ±360° are the same edge.
                    for shift in [-360.0, 360.0] {
                        d = min(d, Self.originToSegment((ax + shift) * k.lon, y1, (bx + shift) * k.lon, y2))
                    }
                }
                body(i, d)
            }
        }
    }

    @inline(__always)
    static func originToSegment(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double) -> Double {
        let dx = x2 - x1, dy = y2 - y1
        let len2 = dx * dx + dy * dy
        var t = len2 > 0 ? -(x1 * dx + y1 * dy) / len2 : 0
        t = min(1, max(0, t))
        let x = x1 + t * dx, y = y1 + t * dy
        return (x * x + y * y).squareRoot()
    }

    /// Exact minimum over the edge of the ellipsoidal distance from p.
    ///
    /// D(t), the distance from p to the edge point at t, has derivative
    /// g(t) = E'(t)·û(t), where û is the unit vector of the geodesic's azimuth
    /// at the edge point (Vincenty gives it with the distance). The minimum is
    /// at an end where g points away from the edge, else at the root of g,
    /// found by the Illinois method in a few evaluations. Edges longer than
    /// 100 km, where D may have more than one local minimum, are first sampled.
    private func geodesicDistanceToEdge(_ p: LonLat, _ i: Int) -> Double {
        let lon1 = p.lon + Geodesy.wrapDegrees(edges[4 * i] - p.lon)
        let lat1 = edges[4 * i + 1]
        let dLon = edges[4 * i + 2] - edges[4 * i], dLat = edges[4 * i + 3] - lat1
        func point(_ t: Double) -> LonLat { LonLat(lon: lon1 + t * dLon, lat: lat1 + t * dLat) }
        /// (D(t), g(t)) in metres and metres per unit t.
        func eval(_ t: Double) -> (Double, Double) {
            let q = point(t)
            let (d, az) = Geodesy.inverse(p, q)
            let m = WGS84.metresPerDegree(atLat: q.lat)
            return (d, cos(az) * m.lat * dLat + sin(az) * m.lon * dLon)
        }
        var lo = 0.0, hi = 1.0
        var (dLo, gLo) = eval(lo)
        var (dHi, gHi) = eval(hi)
        let lengthM = abs(dLat) * 111_000 + abs(dLon) * 111_000 * cos(lat1 * .pi / 180)
        if lengthM > 100_000 {
            // Sample to bracket the global minimum on long edges.
            let samples = 16
            var bestT = 0.0, bestD = dLo
            for s in 1...samples { let t = Double(s) / Double(samples); let d = Geodesy.distance(p, point(t)); if d < bestD { bestD = d; bestT = t } }
            lo = max(0, bestT - 1 / Double(samples)); hi = min(1, bestT + 1 / Double(samples))
            (dLo, gLo) = eval(lo); (dHi, gHi) = eval(hi)
        }
        if gLo >= 0 || gHi <= 0 { return min(dLo, dHi) }
        // Illinois: false position that halves a stale end's value.
        var best = min(dLo, dHi)
        var side = 0
        for _ in 0..<60 {
            let t = (lo * gHi - hi * gLo) / (gHi - gLo)
            let (d, g) = eval(t)
            best = min(best, d)
            if g == 0 || hi - lo < 1e-13 { break }
            if g < 0 {
                lo = t; gLo = g
                if side == -1 { gHi /= 2 }
                side = -1
            } else {
                hi = t; gHi = g
                if side == 1 { gLo /= 2 }
                side = 1
            }
            if abs(g) < 1e-9 * max(1, abs(dLat) + abs(dLon)) * 1e5 { break }
        }
        return best
    }

    // MARK: Probability support

    /// Visits each ring's edges as segments in the affine metric frame at the
    /// fix (metres; origin at the fix). Cut edges are kept: they close rings.
    func forEachRingInFrame(at p: LonLat, _ body: (_ isExterior: Bool, _ segments: [(Double, Double, Double, Double)]) -> Void) {
        let k = WGS84.metresPerDegree(atLat: p.lat)
        for r in 0..<(ringStarts.count - 1) {
            var segs: [(Double, Double, Double, Double)] = []
            segs.reserveCapacity(ringStarts[r + 1] - ringStarts[r])
            for i in ringStarts[r]..<ringStarts[r + 1] {
                let ax = Geodesy.wrapDegrees(edges[4 * i] - p.lon)
                let bx = ax + (edges[4 * i + 2] - edges[4 * i])
                segs.append((ax * k.lon, (edges[4 * i + 1] - p.lat) * k.lat, bx * k.lon, (edges[4 * i + 3] - p.lat) * k.lat))
            }
            body(ringIsExterior[r], segs)
        }
    }
}

/// floor(x) clamped to 0..<count; NaN gives 0. Never traps, whatever x is.
@inline(__always)
func clampedIndex(_ x: Double, _ count: Int) -> Int {
    guard x > 0 else { return 0 }
    return x >= Double(count - 1) ? count - 1 : Int(x)
}
