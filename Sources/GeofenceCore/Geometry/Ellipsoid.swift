#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// WGS 84, the ellipsoid of GPS fixes and of SRID 4326.
public enum WGS84 {
    public static let a = 6_378_137.0
    public static let f = 1.0 / 298.257_223_563
    public static let b = a * (1 - f)
    public static let e2 = f * (2 - f)

    /// Metres per degree of latitude (meridian radius of curvature M) and of
    /// longitude (N·cos φ) at latitude `lat`: the local linear frame used for
    /// first estimates before an exact geodesic refinement.
    @inline(__always)
    public static func metresPerDegree(atLat lat: Double) -> (lat: Double, lon: Double) {
        let phi = lat * .pi / 180
        return metresPerDegree(sinLat: sin(phi), cosLat: cos(phi))
    }

    @inline(__always)
    static func metresPerDegree(sinLat s: Double, cosLat c: Double) -> (lat: Double, lon: Double) {
        let w = (1 - e2 * s * s).squareRoot()
        let m = a * (1 - e2) / (w * w * w)
        let n = a / w
        return (m * .pi / 180, n * c * .pi / 180)
    }
}
