#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Everything a distance query needs to know about the fix itself, computed
/// once per query: the affine frame's metres per degree, tan φ (how fast that
/// frame's longitude scale drifts), the Earth-centred position for chords and
/// the chord-to-arc factor. One sine and cosine each of latitude and
/// longitude, the dearest part of a distance query, so a caller asking about
/// one fix against many areas (a join) builds it once.
public struct FixFrame: Sendable {
    public let p: LonLat
    /// Metres per degree of latitude and of longitude at the fix.
    let k: (lat: Double, lon: Double)
    let tanLat: Double
    let ecef: Chord.Vector
    let arcFactor: Double
    let sinLat, cosLat, sinLon, cosLon: Double

    /// `p` is kept as `p.canonical` (+180 written −180), so both spellings
    /// of the antimeridian give the same answers to the last bit.
    public init(_ p: LonLat) {
        let p = p.canonical
        self.p = p
        let phi = p.lat * .pi / 180, lambda = p.lon * .pi / 180
        let sp = sin(phi), cp = cos(phi), sl = sin(lambda), cl = cos(lambda)
        sinLat = sp; cosLat = cp; sinLon = sl; cosLon = cl
        k = WGS84.metresPerDegree(sinLat: sp, cosLat: cp)
        // Within 0.001° of a pole the frame is meaningless anyway; the bound stays finite.
        tanLat = min(abs(sp / cp), 57_296)
        ecef = Chord.position(sp, cp, sl, cl)
        arcFactor = Chord.arcFactor(sinLat: sp)
    }

    /// How far the affine frame can be off, relative to a distance d: the
    /// longitude scale changes by tan φ · Δφ over a latitude offset Δφ ≤ d/R,
    /// plus curvature terms; 1e-4 covers ellipsoid versus frame at short range.
    /// A product, not a division: the edge walk asks this each time its
    /// nearest edge improves, and a division's latency would be on that path. A
    /// bound, so the last bit does not matter.
    @inline(__always)
    func relativeError(_ d: Double) -> Double {
        let x = d * (1 / 6_371_000)
        return min(0.5, 1e-4 + x * (1 + tanLat) + x * x)
    }

    /// The largest frame distance that may still be the nearest, given the
    /// nearest frame distance so far.
    @inline(__always)
    func reach(_ best: Double) -> Double { best * (1 + 3 * relativeError(best)) + 1e-3 }

    /// Whether the frame's estimates are good enough, out to a distance d,
    /// to choose the candidates for the nearest edge (and to settle a
    /// threshold): its relative error there is at most 1 %. Beyond that (a
    /// few tens of km, less towards a pole) the first-order error bound is
    /// no longer a bound (over a pole the frame is off by a factor of two),
    /// and searches take `EdgeDistance.FarSearch` instead.
    @inline(__always)
    func trusts(_ d: Double) -> Bool { relativeError(d) <= 0.01 }

    /// Whether a nearest frame distance settles "at least `threshold` from
    /// the boundary" on its own; nil when it is within the frame's error
    /// band, or when the frame is not to be trusted out to the threshold.
    /// Only edges truly within the threshold matter: such an edge's frame
    /// distance is within the frame's error at the threshold, whatever the
    /// frame makes of edges farther out.
    @inline(__always)
    func decides(_ best: Double, atLeast threshold: Double) -> Bool? {
        guard trusts(threshold) else { return nil }
        let rel = relativeError(threshold)
        if best > threshold * (1 + 3 * rel) + 1e-3 { return true }
        if best < threshold * (1 - 3 * rel) - 1e-3 { return false }
        return nil
    }
}
