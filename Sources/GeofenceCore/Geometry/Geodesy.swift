#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Distances on the WGS 84 ellipsoid.
///
/// Vincenty's inverse formula: sub-millimetre on the ellipsoid wherever it
/// converges, which is everywhere but for nearly antipodal points; there we
/// fall back to a great-circle distance on a sphere of the mean radius (the
/// only case is a fix on the far side of the Earth from an area, where
/// metre-level accuracy is meaningless for a verdict). Lines shorter than
/// `Chord.reachM`, most of what a geofence measures, take the chord instead:
/// as exact for this purpose and a few times cheaper.
public enum Geodesy {
    public static func distance(_ p: LonLat, _ q: LonLat) -> Double {
        if let d = Chord.distance(p, q) { return d }
        return inverse(p, q).distance
    }

    /// Distance from p to q, and the geodesic's azimuth at q (radians,
    /// clockwise from north): the direction in which moving q lengthens the
    /// distance fastest, which is what a nearest-point search needs.
    public static func inverse(_ p: LonLat, _ q: LonLat) -> (distance: Double, azimuthAtQ: Double) {
        if p.lat == q.lat && p.lon == q.lon { return (0, 0) }
        let a = WGS84.a, b = WGS84.b, f = WGS84.f
        let L = wrapDegrees(q.lon - p.lon) * .pi / 180
        let U1 = atan((1 - f) * tan(p.lat * .pi / 180))
        let U2 = atan((1 - f) * tan(q.lat * .pi / 180))
        let sinU1 = sin(U1), cosU1 = cos(U1), sinU2 = sin(U2), cosU2 = cos(U2)
        var lambda = L
        var iterations = 0
        var sinSigma = 0.0, cosSigma = 0.0, sigma = 0.0, cos2Alpha = 0.0, cos2SigmaM = 0.0
        var sinLambda = 0.0, cosLambda = 0.0
        while true {
            sinLambda = sin(lambda); cosLambda = cos(lambda)
            let t1 = cosU2 * sinLambda
            let t2 = cosU1 * sinU2 - sinU1 * cosU2 * cosLambda
            sinSigma = (t1 * t1 + t2 * t2).squareRoot()
            if sinSigma == 0 { return (0, 0) }
            cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            cos2Alpha = 1 - sinAlpha * sinAlpha
            cos2SigmaM = cos2Alpha != 0 ? cosSigma - 2 * sinU1 * sinU2 / cos2Alpha : 0
            let C = f / 16 * cos2Alpha * (4 + f * (4 - 3 * cos2Alpha))
            let previous = lambda
            lambda = L + (1 - C) * f * sinAlpha
                * (sigma + C * sinSigma * (cos2SigmaM + C * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            iterations += 1
            if abs(lambda - previous) < 1e-13 { break }
            if iterations > 200 { return (sphericalDistance(p, q), sphericalAzimuthAtQ(p, q)) }
        }
        let u2 = cos2Alpha * (a * a - b * b) / (b * b)
        let A = 1 + u2 / 16384 * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)))
        let B = u2 / 1024 * (256 + u2 * (-128 + u2 * (74 - 47 * u2)))
        let deltaSigma = B * sinSigma * (cos2SigmaM + B / 4 * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
            - B / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
        let azimuth = atan2(cosU1 * sinLambda, -sinU1 * cosU2 + cosU1 * sinU2 * cosLambda)
        return (b * A * (sigma - deltaSigma), azimuth)
    }

    static func sphericalAzimuthAtQ(_ p: LonLat, _ q: LonLat) -> Double {
        let phi1 = p.lat * .pi / 180, phi2 = q.lat * .pi / 180
        let dLambda = wrapDegrees(q.lon - p.lon) * .pi / 180
        return atan2(cos(phi1) * sin(dLambda), -sin(phi1) * cos(phi2) + cos(phi1) * sin(phi2) * cos(dLambda))
    }

    /// Haversine distance on the sphere of WGS 84's mean radius.
    public static func sphericalDistance(_ p: LonLat, _ q: LonLat) -> Double {
        let r = (2 * WGS84.a + WGS84.b) / 3
        let phi1 = p.lat * .pi / 180, phi2 = q.lat * .pi / 180
        let dPhi = phi2 - phi1, dLambda = wrapDegrees(q.lon - p.lon) * .pi / 180
        let h = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * r * asin(min(1, h.squareRoot()))
    }

    /// A longitude difference folded into [-180, 180].
    @inline(__always)
    public static func wrapDegrees(_ d: Double) -> Double {
        if d > 180 { return d - 360 * ((d + 180) / 360).rounded(.down) }
        if d < -180 { return d + 360 * ((180 - d) / 360).rounded(.down) }
        return d
    }

    /// A box in lon/lat that contains the circle. Latitude extent uses the
    /// meridian radius at the centre with 1 % slack; near a pole or across the
    /// antimeridian the box widens to the full longitude range rather than wrap.
    public static func boundingBox(of c: Circle) -> BoundingBox {
        let slack = 1.01
        let m = WGS84.metresPerDegree(atLat: c.center.lat)
        let dLat = c.radiusM * slack / m.lat
        let minLat = max(-90, c.center.lat - dLat), maxLat = min(90, c.center.lat + dLat)
        let worstLat = max(abs(minLat), abs(maxLat))
        if worstLat >= 89.9 {
            return BoundingBox(minLon: -180, minLat: minLat, maxLon: 180, maxLat: maxLat)
        }
        let lonScale = WGS84.metresPerDegree(atLat: worstLat).lon
        let dLon = c.radiusM * slack / lonScale
        var minLon = c.center.lon - dLon, maxLon = c.center.lon + dLon
        if minLon < -180 || maxLon > 180 || dLon >= 180 { minLon = -180; maxLon = 180 }
        return BoundingBox(minLon: minLon, minLat: minLat, maxLon: maxLon, maxLat: maxLat)
    }
}
