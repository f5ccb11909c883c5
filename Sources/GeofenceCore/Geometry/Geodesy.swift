#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Distances on the WGS 84 ellipsoid.
///
/// Vincenty's inverse formula: sub-millimetre on the ellipsoid wherever it
/// converges, which is everywhere but for nearly antipodal points (within a
/// degree or two of each other's antipode); those are measured through a
/// curve that separates them (`nearlyAntipodal`). Lines shorter than
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
        if let r = vincenty(p, q) { return r }
        return nearlyAntipodal(p, q) ?? (sphericalDistance(p, q), sphericalAzimuthAtQ(p, q))
    }

    /// Vincenty's inverse, or nil when its iteration does not settle.
    static func vincenty(_ p: LonLat, _ q: LonLat) -> (distance: Double, azimuthAtQ: Double)? {
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
            if iterations > 200 || !lambda.isFinite { return nil }
        }
        let u2 = cos2Alpha * (a * a - b * b) / (b * b)
        let A = 1 + u2 / 16384 * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)))
        let B = u2 / 1024 * (256 + u2 * (-128 + u2 * (74 - 47 * u2)))
        let deltaSigma = B * sinSigma * (cos2SigmaM + B / 4 * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
            - B / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
        let azimuth = atan2(cosU1 * sinLambda, -sinU1 * cosU2 + cosU1 * sinU2 * cosLambda)
        return (b * A * (sigma - deltaSigma), azimuth)
    }

    /// The distance between nearly antipodal points, where Vincenty does not
    /// settle: the shortest geodesic from p to q crosses any closed curve
    /// that separates them, so the distance is the least, over the points x
    /// of such a curve, of d(p, x) + d(x, q), and both of those are
    /// quarter-Earth lines Vincenty measures well. The curve: the ellipsoid's
    /// section by the plane through its centre perpendicular to p's position
    /// (q, near −p, lies on the other side). The sum is sampled round the
    /// curve and its three lowest valleys refined by golden-section search
    /// (there can be two shortest geodesics, by either pole). Nil if q is not
    /// on the far side of that plane.
    static func nearlyAntipodal(_ p: LonLat, _ q: LonLat) -> (distance: Double, azimuthAtQ: Double)? {
        let pp = Chord.position(lat: p.lat, lon: p.lon), qq = Chord.position(lat: q.lat, lon: q.lon)
        let n = pp.length
        let u = (pp.x / n, pp.y / n, pp.z / n)
        guard u.0 * qq.x + u.1 * qq.y + u.2 * qq.z < 0 else { return nil }
        // An orthonormal basis (e1, e2) of the plane ⟂ u.
        let helper: (Double, Double, Double) = abs(u.2) < 0.9 ? (0, 0, 1) : (1, 0, 0)
        var e1 = (helper.1 * u.2 - helper.2 * u.1, helper.2 * u.0 - helper.0 * u.2, helper.0 * u.1 - helper.1 * u.0)
        let l1 = (e1.0 * e1.0 + e1.1 * e1.1 + e1.2 * e1.2).squareRoot()
        e1 = (e1.0 / l1, e1.1 / l1, e1.2 / l1)
        let e2 = (u.1 * e1.2 - u.2 * e1.1, u.2 * e1.0 - u.0 * e1.2, u.0 * e1.1 - u.1 * e1.0)
        func point(_ theta: Double) -> LonLat {
            let c = cos(theta), s = sin(theta)
            let w = (c * e1.0 + s * e2.0, c * e1.1 + s * e2.1, c * e1.2 + s * e2.2)
            let rho = (w.0 * w.0 + w.1 * w.1).squareRoot()
            // On the ellipsoid, tan φ = z / ((1 − e²)·ρ); the scale of w does not matter.
            return LonLat(lon: atan2(w.1, w.0) * 180 / .pi, lat: atan2(w.2, (1 - WGS84.e2) * rho) * 180 / .pi)
        }
        func sum(_ theta: Double) -> Double {
            let x = point(theta)
            let a = vincenty(p, x)?.distance ?? sphericalDistance(p, x)
            let b = vincenty(x, q)?.distance ?? sphericalDistance(x, q)
            return a + b
        }
        let samples = 72
        let step = 2 * Double.pi / Double(samples)
        let values = (0..<samples).map { sum(Double($0) * step) }
        let valleys = (0..<samples).filter { k in
            values[k] <= values[(k + samples - 1) % samples] && values[k] <= values[(k + 1) % samples]
        }.sorted { values[$0] < values[$1] }.prefix(3)
        var best = (Double.infinity, 0.0)
        let g = (5.0.squareRoot() - 1) / 2
        for k in valleys {
            var lo = Double(k - 1) * step, hi = Double(k + 1) * step
            var c = hi - g * (hi - lo), d = lo + g * (hi - lo)
            var fc = sum(c), fd = sum(d)
            for _ in 0..<80 {
                if fc < fd { hi = d; d = c; fd = fc; c = hi - g * (hi - lo); fc = sum(c) }
                else { lo = c; c = d; fc = fd; d = lo + g * (hi - lo); fd = sum(d) }
            }
            let (v, t) = fc < fd ? (fc, c) : (fd, d)
            if v < best.0 { best = (v, t) }
        }
        guard best.0.isFinite else { return nil }
        let x = point(best.1)
        let azimuth = vincenty(x, q)?.azimuthAtQ ?? sphericalAzimuthAtQ(x, q)
        return (best.0, azimuth)
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
