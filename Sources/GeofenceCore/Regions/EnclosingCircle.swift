#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The smallest circle on the WGS 84 ellipsoid that holds a shape: what a
/// phone's region monitor (a centre and a radius) can watch in its place.
///
/// How: project the shape's points (exterior-ring vertices, plus points along
/// long edges, which are straight in lon/lat and so bow away from the
/// geodesic) into an azimuthal equidistant plane about a trial centre, where
/// distances from the centre are exact; take the plane's minimum enclosing
/// circle (Welzl, iterative form); move the trial centre to its centre and
/// repeat while the circle shrinks, so the remaining distortion (which grows
/// with distance from the trial centre) vanishes (`settle`); for a shape of
/// thousands of kilometres, from the poles too (a band round most of a
/// parallel). Edges are read as containment reads them:
/// straight in lon/lat, the long way if they are written so, never wrapped
/// across ±180. The radius returned is the largest exact geodesic
/// distance from the final centre to any point of the edges (`farthest`),
/// or to the point opposite it when the shape holds that point, so the
/// circle holds the shape whatever the plane's error; it is within
/// centimetres of the true minimum for areas of a few kilometres.
public enum EnclosingCircle {
    /// Edges longer than this get interior points, so the circle covers the
    /// lon/lat-straight edge, not only its ends.
    static let densifyM = 500.0

    public static func of(_ shape: Shape) -> Circle {
        switch shape {
        case .circle(let c):
            return c
        case .polygons(let polygons):
            let points = boundaryPoints(polygons)
            precondition(!points.isEmpty, "a validated shape has vertices")
            // The point opposite a centre, when the shape holds it, is the
            // shape's farthest point from it, and no edge point is.
            var box = BoundingBox.empty
            for p in points { box.add(p) }
            var prepared: PreparedShape?
            func holdsAntipode(_ c: LonLat) -> Bool {
                let a = antipode(c)
                guard a.lon >= box.minLon, a.lon <= box.maxLon, a.lat >= box.minLat, a.lat <= box.maxLat else { return false }
                if prepared == nil { prepared = PreparedShape(shape) }
                return prepared?.contains(a) ?? false
            }
            var candidates = [settle(points, from: start(points))]
            // A shape of thousands of kilometres (a band round most of a
            // parallel, edges of hundreds of degrees, a band round the whole
            // Earth) can have its smallest circle far from its box's middle,
            // about or near a pole: the poles, and searches from near them
            // (half a degree off: at a pole the plane has no north to turn
            // from), are candidates too, and the smallest circle wins.
            if candidates[0].radiusM > largeM || holdsAntipode(candidates[0].center) {
                for lat in [90.0, -90.0] {
                    let pole = LonLat(lon: 0, lat: lat)
                    candidates.append(Circle(center: pole, radiusM: farthestPoint(points, from: pole)))
                    candidates.append(settle(points, from: LonLat(lon: 0, lat: lat * 89.5 / 90)))
                }
            }
            let finished = candidates.map { c in
                Circle(center: c.center, radiusM: holdsAntipode(c.center) ? Geodesy.distance(c.center, antipode(c.center))
                                                                           : farthest(polygons, from: c.center, atLeast: c.radiusM))
            }
            return finished.dropFirst().reduce(finished[0]) { $1.radiusM < $0.radiusM ? $1 : $0 }
        }
    }

    /// A circle wider than this is searched for from the poles too.
    static let largeM = 5_000_000.0

    /// The circle about `centre` holding the points, moved to the plane's
    /// minimum enclosing circle's centre until it stops shrinking (a move
    /// that would not shrink it is halved; at most 60 moves, each at least
    /// 1 cm): a centre where the plane about it keeps it is the smallest
    /// circle (the plane keeps azimuths and distances from its centre).
    static func settle(_ points: [LonLat], from start: LonLat) -> Circle {
        func radius(_ c: LonLat) -> Double { farthestPoint(points, from: c) }
        var best = Circle(center: start, radiusM: radius(start))
        for _ in 0..<60 {
            let (x, y, _) = minimumEnclosingCircle(points.map { project($0, about: best.center) })
            var scale = 1.0, moved = false
            while hypot(x, y) * scale >= 0.01 {
                let c = unproject(x: x * scale, y: y * scale, about: best.center)
                let r = radius(c)
                if r < best.radiusM { best = Circle(center: c, radiusM: r); moved = true; break }
                scale /= 2
            }
            if !moved { break }
        }
        return best
    }

    /// The greatest geodesic distance from `c` to one of `points`.
    static func farthestPoint(_ points: [LonLat], from c: LonLat) -> Double {
        points.reduce(0.0) { max($0, Geodesy.distance(c, $1)) }
    }

    /// The point opposite `c` through the Earth's centre.
    static func antipode(_ c: LonLat) -> LonLat { LonLat(lon: Geodesy.wrapDegrees(c.lon + 180), lat: -c.lat) }

    /// Calls `body` with each exterior-ring edge's points (with `holes`, every
    /// ring's): its ends, and between them points every `densifyM` (at most
    /// 64 pieces an edge, but pieces of at most 1°).
    static func forEachEdge(_ polygons: [Polygon], holes: Bool = false, _ body: ([LonLat]) -> Void) {
        for ring in polygons.flatMap({ holes ? $0.rings : Array($0.rings.prefix(1)) }) {
            let pts = ring.points
            for i in pts.indices.dropLast() {
                let a = pts[i], b = pts[i + 1]
                // The edge as containment reads it: straight in lon/lat, never
                // the short way across ±180 (an edge from -100 to 100 passes 0).
                let dLon = b.lon - a.lon
                let middle = LonLat(lon: a.lon + dLon / 2, lat: (a.lat + b.lat) / 2)
                let length = Geodesy.sphericalDistance(a, middle) + Geodesy.sphericalDistance(middle, b)
                // Every 500 m, at most 64 pieces, but no piece longer than 1° either
                // way (an edge of hundreds of degrees: the circle is sought on these points).
                let degrees = max(abs(dLon), abs(b.lat - a.lat))
                let steps = max(length > densifyM ? min(64, Int((length / densifyM).rounded(.up))) : 1,
                                degrees > 1 ? min(1_024, Int(degrees.rounded(.up))) : 1)
                body((0...steps).map { s in
                    s == 0 ? a : s == steps ? b : LonLat(lon: a.lon + dLon * Double(s) / Double(steps), lat: a.lat + (b.lat - a.lat) * Double(s) / Double(steps))
                })
            }
        }
    }

    /// Exterior-ring vertices and the points between them (`forEachEdge`).
    static func boundaryPoints(_ polygons: [Polygon]) -> [LonLat] {
        var out: [LonLat] = []
        forEachEdge(polygons) { out += $0.dropLast() }
        if out.isEmpty, let first = polygons.first?.rings.first?.points.first { out.append(first) }
        return out
    }

    /// The exact geodesic distance from `centre` to the farthest point of the
    /// shape's edges, at least `radius` (the farthest of their points): a
    /// piece between two points whose nearer end lies within the piece's
    /// length of that (so a point inside it could be farther) is searched for
    /// its farthest point (golden section; a piece is short, so its distance
    /// has one peak). Without it, a shape with edges of hundreds of degrees
    /// (64 pieces of 5° each) reached a kilometre or two past its circle.
    static func farthest(_ polygons: [Polygon], from centre: LonLat, atLeast radius: Double) -> Double {
        var r = radius
        // Holes too: they lie inside a circle smaller than a hemisphere, but
        // the far side of a larger one can pass through them.
        forEachEdge(polygons, holes: true) { pts in
            for (a, b) in zip(pts, pts.dropFirst()) {
                let da = Geodesy.distance(centre, a), db = Geodesy.distance(centre, b)
                let reach = 1.01 * (Geodesy.sphericalDistance(a, b) + 1)
                guard min(da, db) + reach > r else { continue }
                func at(_ t: Double) -> Double {
                    Geodesy.distance(centre, LonLat(lon: a.lon + (b.lon - a.lon) * t, lat: a.lat + (b.lat - a.lat) * t))
                }
                let g = (5.0.squareRoot() - 1) / 2
                var (lo, hi) = (0.0, 1.0)
                var (x1, x2) = (hi - g * (hi - lo), lo + g * (hi - lo))
                var (f1, f2) = (at(x1), at(x2))
                for _ in 0..<40 {
                    if f1 < f2 {
                        lo = x1; x1 = x2; f1 = f2; x2 = lo + g * (hi - lo); f2 = at(x2)
                    } else {
                        hi = x2; x2 = x1; f2 = f1; x1 = hi - g * (hi - lo); f1 = at(x1)
                    }
                }
                r = max(r, da, db, f1, f2)
            }
        }
        return r
    }

    /// A first centre: the middle of the points' box, taken across the
    /// antimeridian when that box is narrower.
    static func start(_ points: [LonLat]) -> LonLat {
        var box = BoundingBox.empty
        var shifted = BoundingBox.empty
        for p in points {
            box.add(p)
            shifted.add(LonLat(lon: p.lon < 0 ? p.lon + 360 : p.lon, lat: p.lat))
        }
        let useShifted = shifted.maxLon - shifted.minLon < box.maxLon - box.minLon
        let b = useShifted ? shifted : box
        return LonLat(lon: Geodesy.wrapDegrees((b.minLon + b.maxLon) / 2), lat: (b.minLat + b.maxLat) / 2)
    }

    /// Azimuthal equidistant coordinates (east, north) in metres.
    static func project(_ p: LonLat, about c: LonLat) -> (Double, Double) {
        let (d, azimuthAtC) = Geodesy.inverse(p, c)
        // The geodesic from p arrives at c heading azimuthAtC; p lies the opposite way.
        let az = azimuthAtC + .pi
        return (d * sin(az), d * cos(az))
    }

    /// The inverse of `project` on the sphere (the point at the plane's
    /// azimuth and distance from `c`), which the iteration makes exact enough:
    /// a move of thousands of kilometres, or one from near a pole, lands
    /// where the plane put it (a first-order step in degrees did not).
    static func unproject(x: Double, y: Double, about c: LonLat) -> LonLat {
        let delta = hypot(x, y) / 6_371_008.8, theta = atan2(x, y)
        let phi = c.lat * .pi / 180
        let sinLat = max(-1, min(1, sin(phi) * cos(delta) + cos(phi) * sin(delta) * cos(theta)))
        let dLon = atan2(sin(theta) * sin(delta) * cos(phi), cos(delta) - sin(phi) * sinLat)
        return LonLat(lon: Geodesy.wrapDegrees(c.lon + dLon * 180 / .pi), lat: asin(sinLat) * 180 / .pi)
    }

    /// Welzl's minimum enclosing circle, iterative form, on points in a
    /// fixed pseudo-random order (deterministic output, expected linear time).
    static func minimumEnclosingCircle(_ input: [(Double, Double)]) -> (Double, Double, Double) {
        var p = input
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for i in stride(from: p.count - 1, to: 0, by: -1) {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            p.swapAt(i, Int(seed >> 33) % (i + 1))
        }
        let eps = 1e-7
        func inside(_ c: (Double, Double, Double), _ q: (Double, Double)) -> Bool {
            hypot(q.0 - c.0, q.1 - c.1) <= c.2 * (1 + 1e-12) + eps
        }
        func two(_ a: (Double, Double), _ b: (Double, Double)) -> (Double, Double, Double) {
            let x = (a.0 + b.0) / 2, y = (a.1 + b.1) / 2
            return (x, y, hypot(a.0 - x, a.1 - y))
        }
        func three(_ a: (Double, Double), _ b: (Double, Double), _ c: (Double, Double)) -> (Double, Double, Double) {
            let bx = b.0 - a.0, by = b.1 - a.1, cx = c.0 - a.0, cy = c.1 - a.1
            let d = 2 * (bx * cy - by * cx)
            // Collinear: the widest pair's circle holds the third point.
            guard abs(d) > 1e-12 else {
                return [two(a, b), two(a, c), two(b, c)].max { $0.2 < $1.2 }!
            }
            let ux = (cy * (bx * bx + by * by) - by * (cx * cx + cy * cy)) / d
            let uy = (bx * (cx * cx + cy * cy) - cx * (bx * bx + by * by)) / d
            return (a.0 + ux, a.1 + uy, hypot(ux, uy))
        }
        var c = (p[0].0, p[0].1, 0.0)
        for i in 1..<max(1, p.count) where !inside(c, p[i]) {
            c = (p[i].0, p[i].1, 0)
            for j in 0..<i where !inside(c, p[j]) {
                c = two(p[i], p[j])
                for k in 0..<j where !inside(c, p[k]) {
                    c = three(p[i], p[j], p[k])
                }
            }
        }
        return c
    }
}
