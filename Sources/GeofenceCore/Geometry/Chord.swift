#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Short geodesics from the straight chord between Earth-centred (ECEF) points.
///
/// Why: an exact ellipsoidal distance by Vincenty's iteration is a loop of
/// trigonometric calls, and a distance to a polygon edge needs several of them. For short lines the
/// chord through the Earth already carries almost all of the answer: a curve
/// of curvature κ and length s has the chord c = s − κ²s³/24 + O(s⁵). A
/// geodesic's curvature in space is the ellipsoid's normal curvature along it,
/// which lies between 1/M and 1/N; taking κ² = 1/(M·N) at the line's mean
/// latitude leaves an error under e²·c³/(24 M N) plus the s⁵ term: 0.03 mm at
/// 20 km, against the 10 mm the contract allows (docs/sql.md, gf_distance_m). Beyond `reachM` callers use
/// Vincenty. (Checked against Vincenty at every latitude in GeometryTests and
/// against GeographicLib in the integration tests.)
///
/// Cost: one position is a sine and a cosine of latitude and of longitude and
/// a square root, about a fifth of a Vincenty evaluation.
public enum Chord {
    /// Lines longer than this are left to Vincenty.
    public static let reachM = 20_000.0

    public struct Vector: Sendable {
        public var x, y, z: Double
        @inline(__always) static func - (l: Vector, r: Vector) -> Vector { Vector(x: l.x - r.x, y: l.y - r.y, z: l.z - r.z) }
        @inline(__always) func dot(_ o: Vector) -> Double { x * o.x + y * o.y + z * o.z }
        @inline(__always) var length: Double { dot(self).squareRoot() }
    }

    /// ECEF position (metres) of a point at height 0.
    @inline(__always)
    public static func position(lat: Double, lon: Double) -> Vector {
        let phi = lat * .pi / 180, lambda = lon * .pi / 180
        return position(sin(phi), cos(phi), sin(lambda), cos(lambda))
    }

    /// ECEF position from the sines and cosines of latitude and longitude.
    @inline(__always)
    static func position(_ sp: Double, _ cp: Double, _ sl: Double, _ cl: Double) -> Vector {
        let n = WGS84.a / (1 - WGS84.e2 * sp * sp).squareRoot()
        return Vector(x: n * cp * cl, y: n * cp * sl, z: n * (1 - WGS84.e2) * sp)
    }

    /// ECEF position, and its rate of change along a path that moves by
    /// (dLat, dLon) degrees per unit of the path's parameter.
    @inline(__always)
    static func positionAndRate(lat: Double, lon: Double, dLat: Double, dLon: Double) -> (Vector, Vector) {
        let phi = lat * .pi / 180, lambda = lon * .pi / 180
        return positionAndRate(sin(phi), cos(phi), sin(lambda), cos(lambda), dLat: dLat, dLon: dLon)
    }

    /// The same near a fix whose sines and cosines are known: the point's are
    /// found by the angle-addition formulas from the small offsets, without
    /// calling libm (four calls would be most of a chord evaluation).
    @inline(__always)
    static func positionAndRate(near fix: FixFrame, lat: Double, lon: Double, dLat: Double, dLon: Double) -> (Vector, Vector) {
        let a = (lat - fix.p.lat) * .pi / 180, b = (lon - fix.p.lon) * .pi / 180
        guard abs(a) < 0.05, abs(b) < 0.05 else { return positionAndRate(lat: lat, lon: lon, dLat: dLat, dLon: dLon) }
        let (sa, ca) = smallSinCos(a), (sb, cb) = smallSinCos(b)
        return positionAndRate(fix.sinLat * ca + fix.cosLat * sa, fix.cosLat * ca - fix.sinLat * sa,
                               fix.sinLon * cb + fix.cosLon * sb, fix.cosLon * cb - fix.sinLon * sb, dLat: dLat, dLon: dLon)
    }

    /// sin x and cos x for |x| < 0.05 by their Taylor series to x⁹ and x¹⁰
    /// (the next terms are under 1e-21).
    @inline(__always)
    static func smallSinCos(_ x: Double) -> (Double, Double) {
        let x2 = x * x
        let s = x * (1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72))))
        let c = 1 - x2 / 2 * (1 - x2 / 12 * (1 - x2 / 30 * (1 - x2 / 56 * (1 - x2 / 90))))
        return (s, c)
    }

    @inline(__always)
    private static func positionAndRate(_ sp: Double, _ cp: Double, _ sl: Double, _ cl: Double, dLat: Double, dLon: Double) -> (Vector, Vector) {
        let w2 = 1 - WGS84.e2 * sp * sp
        let w = w2.squareRoot()
        let n = WGS84.a / w
        let m = WGS84.a * (1 - WGS84.e2) / (w2 * w)
        // ∂P/∂φ = M (−sinφ cosλ, −sinφ sinλ, cosφ); ∂P/∂λ = N cosφ (−sinλ, cosλ, 0); per radian.
        let a = m * dLat * .pi / 180, b = n * cp * dLon * .pi / 180
        let p = Vector(x: n * cp * cl, y: n * cp * sl, z: n * (1 - WGS84.e2) * sp)
        let rate = Vector(x: -a * sp * cl - b * sl, y: -a * sp * sl + b * cl, z: a * cp)
        return (p, rate)
    }

    /// 1/(24·M·N) at a latitude: the chord-to-arc factor of `arc`.
    @inline(__always)
    static func arcFactor(atLat lat: Double) -> Double { arcFactor(sinLat: sin(lat * .pi / 180)) }

    @inline(__always)
    static func arcFactor(sinLat s: Double) -> Double {
        let w2 = 1 - WGS84.e2 * s * s
        // M·N = a²(1−e²)/w⁴
        return w2 * w2 / (24 * WGS84.a * WGS84.a * (1 - WGS84.e2))
    }

    /// The geodesic length whose chord is c, given `arcFactor` near the line.
    @inline(__always)
    static func arc(_ c: Double, factor: Double) -> Double {
        let k = c * c * factor
        // s = c (1 + c²κ²/24 + 3 c⁴κ⁴/640): the sphere's series to fifth order.
        return c * (1 + k + 2.7 * k * k)
    }

    /// Geodesic distance between two points, if it is within `reachM`.
    @inline(__always)
    public static func distance(_ p: LonLat, _ q: LonLat) -> Double? {
        let c = (position(lat: p.lat, lon: p.lon) - position(lat: q.lat, lon: q.lon)).length
        guard c <= reachM else { return nil }
        return arc(c, factor: arcFactor(atLat: (p.lat + q.lat) / 2))
    }
}
