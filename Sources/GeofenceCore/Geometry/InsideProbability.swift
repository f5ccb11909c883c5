#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The probability that the true position lies inside an area, when the fix
/// is the mean of a circular Gaussian with σ = CEP.sigma(accuracy) (behaviour §3).
///
/// How it works, for polygons: in the fix's local metric frame, the Gaussian
/// mass of a ring's interior is the sum over its edges of the mass of the
/// triangle (fix, edge start, edge end), signed by orientation. Along an edge
/// q(t) = a + t(b-a) that mass is (1/2π)∫ (1 - e^{-|q|²/2σ²}) / |q|² · (a×b) dt.
/// Where |q| > 9σ the factor 1 - e^{-|q|²/2σ²} is 1 to within 3e-18, and the
/// integral is the angle the part subtends at the fix, exactly (atan2). Only
/// the part of the edge within 9σ of the fix (at most 18σ long, whatever the
/// edge's length) is integrated numerically; there the integrand is smooth
/// and bounded even when the edge passes through the fix, so Gauss-Legendre
/// panels of σ/2 integrate it to well below 1e-6.
///
/// Rings are unwrapped in longitude from the fix (`forEachRingInFrame`), so a
/// ring stays closed whatever its width; each copy of a ring shifted by a
/// whole turn that comes within 9σ of the fix is added (the copies are
/// disjoint, and one that does not reach the fix adds nothing: its angles
/// sum to zero around a point outside it). Rings are summed by absolute
/// value, exteriors added and holes subtracted. For circles: the Rice
/// distribution's CDF (Marcum Q), integrated the same way.
public enum InsideProbability {
    public static func of(_ shape: PreparedShape, at p: LonLat, accuracy: Double) -> Double {
        if accuracy <= 0 { return shape.contains(p) ? 1 : 0 }
        let sigma = CEP.sigma(forAccuracy: accuracy)
        switch shape.shape {
        case .circle(let c):
            return circle(centerDistance: Geodesy.distance(c.center, p), radius: c.radiusM, sigma: sigma)
        case .polygons:
            if (90 - abs(p.lat)) * polarMetresPerDegree < min(50 * sigma, 500_000) {
                return nearPole(shape, at: p, sigma: sigma)
            }
            var total = 0.0
            let reach = 9 * sigma
            shape.forEachRingInFrame(at: p) { isExterior, segments, turn in
                var lo = Double.infinity, hi = -Double.infinity
                for s in segments { lo = min(lo, s.0, s.2); hi = max(hi, s.0, s.2) }
                var ring = 0.0
                for copy in -2...2 {
                    let shift = Double(copy) * turn
                    guard lo + shift <= reach, hi + shift >= -reach else { continue }
                    for s in segments { ring += edgeMass(s.0 + shift, s.1, s.2 + shift, s.3, sigma: sigma) }
                }
                total += isExterior ? abs(ring) : -abs(ring)
            }
            return min(1, max(0, total))
        }
    }

    /// Metres per degree of latitude at a pole (M there is a/√(1−e²)).
    static let polarMetresPerDegree = WGS84.a / (1 - WGS84.e2).squareRoot() * .pi / 180

    /// The same, for a fix whose pole is within 50σ (and 500 km): the flat
    /// frame at the fix cannot hold a pole (it maps the parallels round it
    /// to straight lines), so the frame is the polar azimuthal equidistant
    /// one (distance from the pole along the meridian, and longitude as the
    /// angle), whose scale is right to ψ²/6 at ψ radians from the pole (1e-4
    /// at 160 km, 1e-3 at 500 km). Edges are curves there (parallels are
    /// circles about the pole), so each is cut into pieces of at most 1° of
    /// longitude, straight to within 4e-5 of their distance from the pole:
    /// about 0.002σ for a piece within 9σ of the fix, under 0.001 of
    /// probability. Longitude wraps by itself (sin and cos of it), so no
    /// ring is unwrapped, edges along ±180 cancel their partners and an edge
    /// along the pole shrinks to the pole.
    static func nearPole(_ shape: PreparedShape, at p: LonLat, sigma: Double) -> Double {
        let north = p.lat >= 0
        func position(_ lon: Double, _ lat: Double) -> (Double, Double) {
            let rho = (90 - (north ? lat : -lat)) * polarMetresPerDegree
            let lambda = lon * .pi / 180
            return (rho * sin(lambda), -rho * cos(lambda))
        }
        let (fx, fy) = position(p.lon, p.lat)
        var total = 0.0
        shape.forEachRing { isExterior, edges in
            var ring = 0.0
            var k = 0
            while k + 3 < edges.count {
                let lon1 = edges[k], lat1 = edges[k + 1], lon2 = edges[k + 2], lat2 = edges[k + 3]
                k += 4
                let span = abs(lon2 - lon1)
                let pieces = max(1, span < 1_000 ? Int(span.rounded(.up)) : 1_000)  // never Int(NaN)
                var (ax, ay) = position(lon1, lat1)
                for j in 1...pieces {
                    let t = Double(j) / Double(pieces)
                    let (bx, by) = j == pieces ? position(lon2, lat2) : position(lon1 + t * (lon2 - lon1), lat1 + t * (lat2 - lat1))
                    ring += edgeMass(ax - fx, ay - fy, bx - fx, by - fy, sigma: sigma)
                    ax = bx; ay = by
                }
            }
            total += isExterior ? abs(ring) : -abs(ring)
        }
        return min(1, max(0, total))
    }

    static func edgeMass(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double, sigma: Double) -> Double {
        let cross = ax * by - ay * bx
        if cross == 0 { return 0 }
        let dx = bx - ax, dy = by - ay
        let len2 = dx * dx + dy * dy
        // Where the edge's line meets the circle of radius 9σ about the fix:
        // |a + t(b−a)|² = R² has the discriminant len²R² − cross² (Lagrange).
        let reach = 9 * sigma
        let disc = len2 * reach * reach - cross * cross
        let foot = -(ax * dx + ay * dy) / len2
        let half = disc > 0 ? disc.squareRoot() / len2 : 0
        let t0 = max(0, foot - half), t1 = min(1, foot + half)
        if disc <= 0 || t0 >= t1 { return atan2(cross, ax * bx + ay * by) / (2 * .pi) }
        let x0 = ax + t0 * dx, y0 = ay + t0 * dy, x1 = ax + t1 * dx, y1 = ay + t1 * dy
        var angle = 0.0
        if t0 > 0 { angle += atan2(ax * y0 - ay * x0, ax * x0 + ay * y0) }
        if t1 < 1 { angle += atan2(x1 * by - y1 * bx, x1 * bx + y1 * by) }
        let length = (t1 - t0) * len2.squareRoot()
        let panels = 1 + clampedIndex(length / (0.5 * sigma), 512)
        let twoSigma2 = 2 * sigma * sigma
        var sum = 0.0
        let h = (t1 - t0) / Double(panels)
        for k in 0..<panels {
            let start = t0 + Double(k) * h
            for (node, weight) in GaussLegendre.eight {
                let t = start + (node + 1) * 0.5 * h
                let x = ax + t * dx, y = ay + t * dy
                let r2 = x * x + y * y
                let value = r2 < 1e-12 * twoSigma2 ? 1 / twoSigma2 : -expm1(-r2 / twoSigma2) / r2
                sum += weight * 0.5 * h * value
            }
        }
        return (sum * cross + angle) / (2 * .pi)
    }

    /// P(|X| < R) for X ~ N(c, σ²I) in the plane: ∫₀ᴿ (r/σ²) e^{-(r-c)²/2σ²} I0e(rc/σ²) dr.
    ///
    /// Integrated in v = (r − c)/σ over [−12, 12] ∩ [−c/σ, (R − c)/σ]: the
    /// offset from the fix is taken in metres before it is scaled, so that a
    /// σ far below the metre loses nothing to the size of c and R (with r in
    /// units of σ, c/σ ≈ 1e15 left the Gaussian a few ulps wide), and the
    /// density is u·I0e(u·k) written as √(u/k)·(its asymptotic series) where
    /// u·k is large, so nothing overflows. Mass beyond 12σ is negligible.
    static func circle(centerDistance c: Double, radius R: Double, sigma: Double) -> Double {
        let k = c / sigma, top = (R - c) / sigma
        // σ too small for any scale: the fix's side of the edge decides.
        guard k.isFinite, top.isFinite else { return c < R ? 1 : 0 }
        let v0 = max(-k, -12), v1 = min(top, 12)
        if v1 <= v0 { return c < R ? 1 : 0 }
        let panels = 4 + clampedIndex((v1 - v0) / 0.25, 2048)
        let h = (v1 - v0) / Double(panels)
        var sum = 0.0
        for p in 0..<panels {
            let start = v0 + Double(p) * h
            for (node, weight) in GaussLegendre.eight {
                let v = start + (node + 1) * 0.5 * h
                let u = max(0, k + v), x = u * k
                let radial = x < 3.75 ? u * besselI0Scaled(x) : (u / k).squareRoot() * besselI0ScaledSeries(3.75 / x)
                sum += weight * 0.5 * h * exp(-v * v / 2) * radial
            }
        }
        return min(1, max(0, sum))
    }

    /// e^{-x} I0(x) for x ≥ 0 (Abramowitz & Stegun 9.8.1, 9.8.2; |ε| < 2e-7 relative).
    static func besselI0Scaled(_ x: Double) -> Double {
        if x < 3.75 {
            let t = (x / 3.75) * (x / 3.75)
            let i0 = 1 + t * (3.5156229 + t * (3.0899424 + t * (1.2067492 + t * (0.2659732 + t * (0.0360768 + t * 0.0045813)))))
            return i0 * exp(-x)
        }
        return besselI0ScaledSeries(3.75 / x) / x.squareRoot()
    }

    /// √x·e^{-x} I0(x) for x ≥ 3.75, in t = 3.75/x (A&S 9.8.2): finite even where x is not.
    static func besselI0ScaledSeries(_ t: Double) -> Double {
        0.39894228 + t * (0.01328592 + t * (0.00225319 + t * (-0.00157565 + t * (0.00916281
            + t * (-0.02057706 + t * (0.02635537 + t * (-0.01647633 + t * 0.00392377)))))))
    }
}

enum GaussLegendre {
    /// Nodes on [-1, 1] and weights of the 8-point rule.
    static let eight: [(Double, Double)] = [
        (-0.9602898564975363, 0.1012285362903763), (-0.7966664774136267, 0.2223810344533745),
        (-0.5255324099163290, 0.3137066458778873), (-0.1834346424956498, 0.3626837833783620),
        (0.1834346424956498, 0.3626837833783620), (0.5255324099163290, 0.3137066458778873),
        (0.7966664774136267, 0.2223810344533745), (0.9602898564975363, 0.1012285362903763),
    ]
}
