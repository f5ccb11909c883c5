#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The direct geodesic problem on the WGS 84 ellipsoid: where a geodesic
/// from a point, leaving at a given azimuth, arrives after a given distance.
///
/// Vincenty's direct formula: sub-millimetre on the ellipsoid for any
/// distance up to half the meridian, which covers every circle an area may
/// have (radius at most 10,000 km). It is the counterpart of
/// `Geodesy.inverse`, so a point it makes measures back to its distance
/// within that accuracy.
extension Geodesy {
    /// The point `distance` metres from `p` along the geodesic leaving it at
    /// `azimuth` (radians, clockwise from north), its longitude folded into
    /// [-180, 180]. `p` must not be a pole (there every azimuth is south, or
    /// north, and the formula has no direction to start from); nil then, and
    /// when the iteration does not settle.
    public static func destination(from p: LonLat, azimuth: Double, distance: Double) -> LonLat? {
        guard abs(p.lat) < 90 else { return nil }
        let a = WGS84.a, b = WGS84.b, f = WGS84.f
        let sinAlpha1 = sin(azimuth), cosAlpha1 = cos(azimuth)
        let tanU1 = (1 - f) * tan(p.lat * .pi / 180)
        let cosU1 = 1 / (1 + tanU1 * tanU1).squareRoot(), sinU1 = tanU1 * cosU1
        let sigma1 = atan2(tanU1, cosAlpha1)
        let sinAlpha = cosU1 * sinAlpha1
        let cos2Alpha = 1 - sinAlpha * sinAlpha
        let u2 = cos2Alpha * (a * a - b * b) / (b * b)
        let A = 1 + u2 / 16384 * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)))
        let B = u2 / 1024 * (256 + u2 * (-128 + u2 * (74 - 47 * u2)))
        var sigma = distance / (b * A)
        var sinSigma = 0.0, cosSigma = 0.0, cos2SigmaM = 0.0
        var iterations = 0
        while true {
            cos2SigmaM = cos(2 * sigma1 + sigma)
            sinSigma = sin(sigma); cosSigma = cos(sigma)
            let deltaSigma = B * sinSigma * (cos2SigmaM + B / 4 * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
                - B / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
            let previous = sigma
            sigma = distance / (b * A) + deltaSigma
            iterations += 1
            if abs(sigma - previous) < 1e-13 { break }
            if iterations > 200 || !sigma.isFinite { return nil }
        }
        cos2SigmaM = cos(2 * sigma1 + sigma)
        sinSigma = sin(sigma); cosSigma = cos(sigma)
        let t = sinU1 * sinSigma - cosU1 * cosSigma * cosAlpha1
        let lat = atan2(sinU1 * cosSigma + cosU1 * sinSigma * cosAlpha1, (1 - f) * (sinAlpha * sinAlpha + t * t).squareRoot())
        let lambda = atan2(sinSigma * sinAlpha1, cosU1 * cosSigma - sinU1 * sinSigma * cosAlpha1)
        let C = f / 16 * cos2Alpha * (4 + f * (4 - 3 * cos2Alpha))
        let L = lambda - (1 - C) * f * sinAlpha
            * (sigma + C * sinSigma * (cos2SigmaM + C * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
        let lon = wrapDegrees(p.lon + L * 180 / .pi)
        guard lon.isFinite, lat.isFinite else { return nil }
        return LonLat(lon: lon, lat: lat * 180 / .pi)
    }
}
