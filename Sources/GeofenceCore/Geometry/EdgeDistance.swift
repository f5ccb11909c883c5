// Longer than 300 lines: the near search (in the fix's flat frame) and the far one (ellipsoid-wide bounds) must pick the same nearest edge where both apply, so they share this file's helpers.
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// One polygon edge, straight in lon/lat (RFC 7946, GEOS).
struct Edge {
    var lon1, lat1, lon2, lat2: Double

    @inline(__always)
    init(_ lon1: Double, _ lat1: Double, _ lon2: Double, _ lat2: Double) {
        self.lon1 = lon1; self.lat1 = lat1; self.lon2 = lon2; self.lat2 = lat2
    }
}

/// Geodesic distance from a fix to polygon edges, shared by every way of
/// holding a polygon (prepared with an index, or read straight from a BLOB).
///
/// How it works:
/// 1. The affine frame at the fix (lon/lat scaled to metres there) maps
///    lon/lat-straight edges to straight segments, so it finds the nearest
///    edges cheaply (`frame`); its error relative to the truth is bounded by
///    `FixFrame.relativeError`, so only edges within `FixFrame.reach` of the
///    nearest can be the nearest (`Candidates`).
/// 2. Those few get an exact distance (`exact`): the chord method when near,
///    Vincenty with a root search otherwise.
enum EdgeDistance {
    /// Distance in metres from the fix to the edge in the affine frame at the
    /// fix, and where along the edge (0...1) the frame's nearest point lies;
    /// or nil as soon as it is clear that the edge is farther than `reach`.
    /// Most edges a search meets are, and telling so needs neither a division
    /// nor a square root (d > r ⟺ cross² > r²·len², the cross product being
    /// twice the triangle (fix, edge) in the frame).
    @inline(__always)
    static func frame(_ e: Edge, _ fix: FixFrame, within reach: Double = .infinity) -> (Double, Double)? {
        let p = fix.p, k = fix.k
        let ax = Geodesy.wrapDegrees(e.lon1 - p.lon)
        let bx = ax + (e.lon2 - e.lon1)
        let x1 = ax * k.lon, y1 = (e.lat1 - p.lat) * k.lat
        let x2 = bx * k.lon, y2 = (e.lat2 - p.lat) * k.lat
        if abs(bx - ax) > 180 {
            // An edge over half the globe wide (a parallel round a pole cap)
            // may pass the fix's meridian one turn over: its copies ±360° are the same edge.
            var (d, t) = originToSegment(x1, y1, x2, y2)
            for shift in [-360.0, 360.0] {
                let (ds, ts) = originToSegment((ax + shift) * k.lon, y1, (bx + shift) * k.lon, y2)
                if ds < d { d = ds; t = ts }
            }
            return d <= reach ? (d, t) : nil
        }
        return segment(x1, y1, x2, y2, within: reach)
    }

    /// The frame distance from the origin (the fix) to a segment already in
    /// the frame's metres, and t; nil when it is beyond `reach`.
    @inline(__always)
    static func segment(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, within reach: Double) -> (Double, Double)? {
        let dx = x2 - x1, dy = y2 - y1
        let along = -(x1 * dx + y1 * dy), len2 = dx * dx + dy * dy
        let r2 = reach * reach
        let d2: Double, t: Double
        if along <= 0 || len2 == 0 {
            d2 = x1 * x1 + y1 * y1; t = 0
        } else if along >= len2 {
            d2 = x2 * x2 + y2 * y2; t = 1
        } else {
            let cross = x1 * dy - y1 * dx
            if cross * cross > r2 * len2 { return nil }
            t = along / len2
            let x = x1 + t * dx, y = y1 + t * dy
            d2 = x * x + y * y
        }
        return d2 <= r2 ? (d2.squareRoot(), t) : nil
    }

    @inline(__always)
    static func originToSegment(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double) -> (Double, Double) {
        let dx = x2 - x1, dy = y2 - y1
        let len2 = dx * dx + dy * dy
        var t = len2 > 0 ? -(x1 * dx + y1 * dy) / len2 : 0
        t = min(1, max(0, t))
        let x = x1 + t * dx, y = y1 + t * dy
        return ((x * x + y * y).squareRoot(), t)
    }

    /// An edge within reach of the nearest, as the frame sees it; `edge` is
    /// whatever names the edge to its holder (an index, a byte offset).
    struct Candidate {
        var edge: Int
        var d: Double
        var t: Double
    }

    /// The edges that may still be the nearest, in a small buffer on the stack.
    struct Candidates {
        static let capacity = 32
        let buffer: UnsafeMutableBufferPointer<Candidate>
        var count = 0
        /// More edges were within reach at once than fit: the caller falls back to a full scan.
        var overflowed = false
        var best = Double.infinity
        var reach = Double.infinity

        init(_ buffer: UnsafeMutableBufferPointer<Candidate>) { self.buffer = buffer }

        /// Offers an edge; returns at once when the frame puts it out of reach.
        @inline(__always)
        mutating func offer(_ e: Edge, id: Int, _ fix: FixFrame) {
            guard let (d, t) = EdgeDistance.frame(e, fix, within: reach) else { return }
            take(id, d, t, fix)
        }

        /// Offers an edge whose ends are already in the frame's metres, by a
        /// caller that offers each edge once (a walk over a ring's edges).
        /// An edge wholly beyond the reach east or west is refused before
        /// any arithmetic, as one north or south is by the caller.
        @inline(__always)
        mutating func offerOnce(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, id: Int, _ fix: FixFrame) {
            if (x1 > reach && x2 > reach) || (x1 < -reach && x2 < -reach) { return }
            guard let (d, t) = EdgeDistance.segment(x1, y1, x2, y2, within: reach) else { return }
            take(id, d, t, fix, once: true)
        }

        @inline(__always)
        private mutating func take(_ id: Int, _ d: Double, _ t: Double, _ fix: FixFrame, once: Bool = false) {
            if d < best {
                best = d
                reach = fix.reach(best)
                var kept = 0
                for k in 0..<count where buffer[k].d <= reach { buffer[kept] = buffer[k]; kept &+= 1 }
                count = kept
            }
            if !once {
                for k in 0..<count where buffer[k].edge == id { return }  // met twice (an edge in two bands)
            }
            if count == buffer.count { overflowed = true; return }
            buffer[count] = Candidate(edge: id, d: d, t: t)
            count &+= 1
        }
    }

    /// Runs `search` with an empty candidate buffer on the stack.
    @inline(__always)
    static func withCandidates<R>(_ search: (inout Candidates) -> R) -> R {
        withUnsafeTemporaryAllocation(of: Candidate.self, capacity: Candidates.capacity) { buffer in
            var near = Candidates(buffer)
            return search(&near)
        }
    }

    /// The exact distance, once a search has offered every edge that could be
    /// the nearest. `edge` reads an edge by its id; `all` visits every edge
    /// (only for the rare overflow: the fix at the centre of a round polygon,
    /// where the 64 nearest by the frame are refined).
    static func resolve(_ near: Candidates, _ fix: FixFrame, edge: (Int) -> Edge, all: ((Int, Edge) -> Void) -> Void) -> Double {
        guard near.best.isFinite else { return .infinity }
        if !fix.trusts(near.best) {
            var far = FarSearch(fix)
            all { _, e in far.offer(e) }
            return far.resolve()
        }
        let limit = near.reach
        var exact = Double.infinity
        if !near.overflowed {
            for c in near.buffer.prefix(near.count) where c.d <= limit {
                exact = min(exact, Self.exact(edge(c.edge), fix, frameDistance: c.d, t: c.t))
            }
            return exact
        }
        var many: [(e: Edge, d: Double, t: Double)] = []
        all { _, e in if let (d, t) = frame(e, fix, within: limit) { many.append((e, d, t)) } }
        many.sort { $0.d < $1.d }
        for c in many.prefix(64) { exact = min(exact, Self.exact(c.e, fix, frameDistance: c.d, t: c.t)) }
        return exact
    }

    /// The exact distance to one edge, from its frame distance and t.
    @inline(__always)
    static func exact(_ e: Edge, _ fix: FixFrame, frameDistance d: Double, t: Double) -> Double {
        let near = d < Chord.reachM / 2 ? chord(e, fix, from: t) : nil
        return near ?? geodesic(e, fix)
    }

    /// Minimum over the edge of the distance from the fix, for edges near it
    /// (the short-range case of `geodesic`, several times cheaper).
    ///
    /// The chord |E(t) − F| between the fix F and the edge point E(t), both
    /// Earth-centred, is minimised by Gauss–Newton from the frame's estimate
    /// t0: the step is −(E−F)·E′ / |E′|², clamped to the edge. The frame puts
    /// t0 within ~d²/R of the answer and each step shrinks that by ~d/R. Near
    /// an interior minimum a point δ metres along the edge from it is only
    /// δ²/2d farther, so the search stops as soon as the next step could gain
    /// less than 10 µm (usually after one evaluation). The geodesic's minimum
    /// is where the chord's is (its length is a function of the chord to
    /// within `Chord`'s error), and its length is `Chord.arc`. Nil, for the
    /// exact method, when the edge is long (its distance may have several
    /// minima), the answer is beyond `Chord.reachM`, or the steps do not settle.
    static func chord(_ e: Edge, _ fix: FixFrame, from t0: Double) -> Double? {
        let p = fix.p
        let lon1 = p.lon + Geodesy.wrapDegrees(e.lon1 - p.lon)
        let dLon = e.lon2 - e.lon1, dLat = e.lat2 - e.lat1
        guard abs(dLat) < 0.5, abs(dLon) < 1 else { return nil }
        var t = t0
        for _ in 0..<8 {
            let (q, rate) = Chord.positionAndRate(near: fix, lat: e.lat1 + t * dLat, lon: lon1 + t * dLon, dLat: dLat, dLon: dLon)
            let v = q - fix.ecef
            let c = v.length
            let h = rate.dot(rate)
            let next = h > 0 ? min(1, max(0, t - v.dot(rate) / h)) : t
            let step = abs(next - t) * h.squareRoot()
            // Settled: no step, or a short one to an interior point (gain ≤ step²/2c).
            if step == 0 || (next > 0 && next < 1 && (step < 1e-4 || step * step < 2e-5 * c)) {
                return c <= Chord.reachM ? Chord.arc(c, factor: fix.arcFactor) : nil
            }
            t = next
        }
        return nil
    }

    /// Exact minimum over the edge of the ellipsoidal distance from the fix,
    /// or some value ≥ `below` when the edge is no nearer than that.
    ///
    /// The edge is cut into pieces by branch and bound: a piece whose
    /// `SphereBounds` lower bound is not below the best distance found so far
    /// (or `below`) is dropped, a longer one is halved, and one short enough
    /// for its distance to have a single minimum (`localMinimum`) is solved.
    /// Short enough: at most 100 km, and at most half its least possible
    /// distance or 10 km. Along a lon/lat-straight line the distance can have
    /// several minima only over lengths comparable to the distance itself, or
    /// to the line's radius of curvature (a parallel's, R/tan φ), which the
    /// 100 km covers at any latitude below 88°. The pieces left are those
    /// within 0.6 % of the nearest: a handful, whatever the edge's length.
    static func geodesic(_ e: Edge, _ fix: FixFrame, below: Double = .infinity) -> Double {
        let p = fix.p
        let lon1 = p.lon + Geodesy.wrapDegrees(e.lon1 - p.lon)
        let dLon = e.lon2 - e.lon1, dLat = e.lat2 - e.lat1
        let line = Line(lon1: lon1, lat1: e.lat1, dLon: dLon, dLat: dLat, p: p)
        let bounds = SphereBounds(fix)
        func lowerBound(_ t0: Double, _ t1: Double) -> Double {
            let a = line.point(t0), b = line.point(t1)
            return bounds.lowerBound(lat1: a.lat, lat2: b.lat, lon1: min(a.lon, b.lon), width: abs(b.lon - a.lon))
        }
        // A piece's length in metres, from above: a degree of latitude is
        // under 111.7 km, and of longitude under that times the largest
        // cosine of the piece's latitudes.
        func lengthM(_ t0: Double, _ t1: Double) -> Double {
            let la = e.lat1 + t0 * dLat, lb = e.lat1 + t1 * dLat
            let nearestEquator = (la > 0) == (lb > 0) ? min(abs(la), abs(lb)) : 0
            return (t1 - t0) * (abs(dLat) + abs(dLon) * cos(nearestEquator * .pi / 180)) * 111_700
        }
        var best = below
        var pieces: [(t0: Double, t1: Double, low: Double)] = [(0, 1, lowerBound(0, 1))]
        while let k = pieces.indices.min(by: { pieces[$0].low < pieces[$1].low }) {
            let piece = pieces.remove(at: k)
            if piece.low >= best { continue }
            let length = lengthM(piece.t0, piece.t1)
            if (length <= 100_000 && length <= max(piece.low / 2, 10_000)) || piece.t1 - piece.t0 < 1e-9 {
                best = min(best, line.localMinimum(piece.t0, piece.t1))
                continue
            }
            let mid = (piece.t0 + piece.t1) / 2
            for (a, b) in [(piece.t0, mid), (mid, piece.t1)] {
                let low = lowerBound(a, b)
                if low < best { pieces.append((a, b, low)) }
            }
        }
        return best
    }

    /// A lon/lat-straight edge, its start unwrapped next to the fix p, as a
    /// function of t in 0...1.
    struct Line {
        let lon1, lat1, dLon, dLat: Double
        let p: LonLat

        @inline(__always)
        func point(_ t: Double) -> LonLat { LonLat(lon: lon1 + t * dLon, lat: lat1 + t * dLat) }

        /// (D(t), g(t)): the distance from p, and its derivative in metres per unit t.
        func eval(_ t: Double) -> (Double, Double) {
            let q = point(t)
            let (d, az) = Geodesy.inverse(p, q)
            let m = WGS84.metresPerDegree(atLat: q.lat)
            return (d, cos(az) * m.lat * dLat + sin(az) * m.lon * dLon)
        }

        /// The minimum of D over lo...hi where it has a single minimum.
        ///
        /// D's derivative g(t) = E'(t)·û(t), û being the unit vector of the
        /// geodesic's azimuth at the edge point (Vincenty gives it with the
        /// distance). The minimum is at an end where g points away from the
        /// piece, else at the root of g, found by the Illinois method in a
        /// few evaluations.
        func localMinimum(_ lo0: Double, _ hi0: Double) -> Double {
            var lo = lo0, hi = hi0
            let (dLo, g0) = eval(lo), (dHi, g1) = eval(hi)
            var gLo = g0, gHi = g1
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
    }

    /// The exact distance from the fix to the nearest of the edges, when the
    /// affine frame cannot be trusted to pick the candidates (see
    /// `FixFrame.trusts`): every edge offered gets a `SphereBounds` lower
    /// bound from its box and its start an upper bound; edges whose lower
    /// bound exceeds the least upper bound are dropped, and the rest are
    /// solved in the order of their lower bounds until the next cannot be
    /// nearer than the best so far.
    struct FarSearch {
        let fix: FixFrame
        let bounds: SphereBounds
        /// At least the distance to the nearest edge offered so far.
        var upper = Double.infinity
        private var kept: [(low: Double, edge: Edge)] = []

        init(_ fix: FixFrame) { self.fix = fix; bounds = SphereBounds(fix) }

        mutating func offer(_ e: Edge) {
            let low = bounds.lowerBound(lat1: e.lat1, lat2: e.lat2, lon1: min(e.lon1, e.lon2), width: abs(e.lon2 - e.lon1))
            if low > upper { return }
            upper = min(upper, bounds.upperBound(lat: e.lat1, lon: e.lon1), bounds.upperBound(lat: e.lat2, lon: e.lon2))
            kept.append((low, e))
        }

        func resolve() -> Double {
            var best = Double.infinity
            for c in kept.sorted(by: { $0.low < $1.low }) {
                if c.low >= best { break }
                best = min(best, EdgeDistance.geodesic(c.edge, fix, below: best))
            }
            return best
        }
    }
}
