#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The probability that the true position lies inside an area, when the fix
/// is the mean of a circular Gaussian with σ = CEP.sigma(accuracy) (SPEC §3).
///
/// How it works, for polygons: in the fix's local metric frame, the Gaussian
/// mass of a ring's interior is the sum over its edges of the mass of the
/// triangle (fix, edge start, edge end), signed by orientation. Along an edge
/// q(t) = a + t(b-a) that mass is (1/2π)∫ (1 - e^{-|q|²/2σ²}) / |q|² · (a×b) dt,
/// whose integrand is smooth and bounded even when the edge passes near the
/// fix, so Gauss-Legendre panels a fraction of σ long integrate it to well
/// below 1e-4. Edges farther than 9σ contribute their angle exactly. Rings
/// are summed by absolute value, exteriors added and holes subtracted.
/// For circles: the Rice distribution's CDF (Marcum Q), integrated the same way.
public enum InsideProbability {
    public static func of(_ shape: PreparedShape, at p: LonLat, accuracy: Double) -> Double {
        if accuracy <= 0 { return shape.contains(p) ? 1 : 0 }
        let sigma = CEP.sigma(forAccuracy: accuracy)
        switch shape.shape {
        case .circle(let c):
            return circle(centerDistance: Geodesy.distance(c.center, p), radius: c.radiusM, sigma: sigma)
        case .polygons:
            var total = 0.0
            shape.forEachRingInFrame(at: p) { isExterior, segments in
                var ring = 0.0
                for s in segments { ring += edgeMass(s.0, s.1, s.2, s.3, sigma: sigma) }
                total += isExterior ? abs(ring) : -abs(ring)
            }
            return min(1, max(0, total))
        }
    }

    static func edgeMass(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double, sigma: Double) -> Double {
        let cross = ax * by - ay * bx
        if cross == 0 { return 0 }
        let near = EdgeDistance.originToSegment(ax, ay, bx, by).0
        if near > 9 * sigma {
            return atan2(cross, ax * bx + ay * by) / (2 * .pi)
        }
        let dx = bx - ax, dy = by - ay
        let length = (dx * dx + dy * dy).squareRoot()
        let panels = 1 + clampedIndex(length / (0.5 * sigma), 512)
        let twoSigma2 = 2 * sigma * sigma
        var sum = 0.0
        let h = 1.0 / Double(panels)
        for k in 0..<panels {
            let t0 = Double(k) * h
            for (node, weight) in GaussLegendre.eight {
                let t = t0 + (node + 1) * 0.5 * h
                let x = ax + t * dx, y = ay + t * dy
                let r2 = x * x + y * y
                let value = r2 < 1e-12 * twoSigma2 ? 1 / twoSigma2 : -expm1(-r2 / twoSigma2) / r2
                sum += weight * 0.5 * h * value
            }
        }
        return sum * cross / (2 * .pi)
    }

    /// P(|X| < R) for X ~ N(c, σ²I) in the plane: ∫₀ᴿ (r/σ²) e^{-(r-c)²/2σ²} I0e(rc/σ²) dr.
    static func circle(centerDistance c: Double, radius R: Double, sigma: Double) -> Double {
        let lo = max(0, c - 12 * sigma), hi = min(R, c + 12 * sigma)
        if hi <= lo { return c < R ? 1 : 0 }
        let panels = 4 + clampedIndex((hi - lo) / (0.25 * sigma), 2048)
        let h = (hi - lo) / Double(panels)
        let s2 = sigma * sigma
        var sum = 0.0
        for k in 0..<panels {
            let r0 = lo + Double(k) * h
            for (node, weight) in GaussLegendre.eight {
                let r = r0 + (node + 1) * 0.5 * h
                let v = (r / s2) * exp(-(r - c) * (r - c) / (2 * s2)) * besselI0Scaled(r * c / s2)
                sum += weight * 0.5 * h * v
            }
        }
        // Mass below lo (only when lo > 0) is negligible by construction (12σ).
        return min(1, max(0, sum))
    }

    /// e^{-x} I0(x) for x ≥ 0 (Abramowitz & Stegun 9.8.1, 9.8.2; |ε| < 2e-7 relative).
    static func besselI0Scaled(_ x: Double) -> Double {
        if x < 3.75 {
            let t = (x / 3.75) * (x / 3.75)
            let i0 = 1 + t * (3.5156229 + t * (3.0899424 + t * (1.2067492 + t * (0.2659732 + t * (0.0360768 + t * 0.0045813)))))
            return i0 * exp(-x)
        }
        let t = 3.75 / x
        let poly = 0.39894228 + t * (0.01328592 + t * (0.00225319 + t * (-0.00157565 + t * (0.00916281
            + t * (-0.02057706 + t * (0.02635537 + t * (-0.01647633 + t * 0.00392377)))))))
        return poly / x.squareRoot()
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
