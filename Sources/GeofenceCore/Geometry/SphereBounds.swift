#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Rigorous lower and upper bounds of the ellipsoidal distance from a fix to
/// a lon/lat box, for the searches where the fix's affine frame cannot be
/// trusted: far from the fix (hundreds of km, across a pole) or close to a pole.
///
/// Why they hold: in geodetic coordinates the ellipsoid's metric is
/// ds² = M²dφ² + N²cos²φ dλ², and the unit sphere's, in the same coordinates,
/// dφ² + cos²φ dλ². The radii of curvature M and N both lie between
/// a(1−e²) (M at the equator) and a/√(1−e²) (both at a pole), so any curve is
/// between `lowRadius` and `highRadius` times as long on the ellipsoid as on
/// the unit sphere. The geodesic between two points is therefore at least
/// `lowRadius`·θ and at most `highRadius`·θ long, θ being the great-circle
/// angle between the same coordinates on the unit sphere: 0.6 % below and
/// 0.5 % above the truth at worst.
public struct SphereBounds {
    static let lowRadius = WGS84.a * (1 - WGS84.e2)
    static let highRadius = WGS84.a / (1 - WGS84.e2).squareRoot()
    /// At most the distance between points a degree of latitude apart, anywhere.
    static let lowPerDegree = lowRadius * .pi / 180

    let lon: Double
    let sinLat, cosLat: Double
    /// The point itself, for `farLowerBound`.
    let point: LonLat

    init(_ fix: FixFrame) {
        lon = fix.p.lon; sinLat = fix.sinLat; cosLat = fix.cosLat; point = fix.p
    }

    public init(_ p: LonLat) {
        let p = p.canonical, phi = p.lat * .pi / 180
        lon = p.lon; sinLat = sin(phi); cosLat = cos(phi); point = p
    }

    /// At most the ellipsoidal distance from the point to any point of the
    /// box (an R*Tree's: west to east without wrapping); 0 for a box that is
    /// none (NaN, west past east, south past north), so that it is never
    /// passed over.
    public func lowerBound(to b: BoundingBox) -> Double {
        let width = b.maxLon - b.minLon
        guard width >= 0, b.maxLat >= b.minLat else { return 0 }
        let bound = lowerBound(lat1: b.minLat, lat2: b.maxLat, lon1: b.minLon, width: width)
        return bound.isNaN ? 0 : bound
    }

    /// At most the ellipsoidal distance from the point to any point of the
    /// box, from the latitudes alone (no meridian is shorter than
    /// `lowRadius` a radian): no trigonometry, for the many boxes a search
    /// only queues; 0 for a box that is none.
    public func latitudeLowerBound(to b: BoundingBox) -> Double {
        let gap = max(0, b.minLat - point.lat, point.lat - b.maxLat)
        let bound = Self.lowRadius * gap * .pi / 180 - 1
        return bound > 0 ? bound : 0
    }

    /// At most the ellipsoidal distance from the point to any point of the
    /// box, within about the box's size of the truth where `lowerBound(to:)`
    /// is 0.6 % of the distance away (which at thousands of km is more than
    /// a city): the geodesic distance to the box's centre (Vincenty) less the
    /// length of a way from the centre to any point of the box, along its
    /// meridian and then a parallel (no geodesic is longer than a way).
    /// Nil where neither measure settles or the box is none.
    public func farLowerBound(to b: BoundingBox) -> Double? {
        let halfLat = (b.maxLat - b.minLat) / 2, halfLon = (b.maxLon - b.minLon) / 2
        guard halfLat >= 0, halfLon >= 0, halfLat.isFinite, halfLon.isFinite else { return nil }
        let centre = LonLat(lon: b.minLon + halfLon, lat: b.minLat + halfLat)
        // Where Vincenty does not settle (within a degree or two of the
        // antipode), `nearlyAntipodal`: its minimum over a separating curve
        // is never below the distance and is tested to centimetres against
        // GeographicLib; 100 m is taken off for its search's tolerance.
        guard let d = Geodesy.vincenty(point, centre)?.distance ?? Geodesy.nearlyAntipodal(point, centre).map({ $0.distance - 100 }),
              d.isFinite else { return nil }
        let equatorward = b.minLat <= 0 && b.maxLat >= 0 ? 0 : min(abs(b.minLat), abs(b.maxLat))
        let reach = Self.highRadius * (halfLat + halfLon * cos(equatorward * .pi / 180)) * .pi / 180
        return max(0, d - reach - 1)
    }

    /// At most the ellipsoidal distance from the fix to any point of the box
    /// of latitudes lat1...lat2 and longitudes lon1 + [0, width] (degrees,
    /// width ≥ 0). The slack covers acos's rounding at tiny angles.
    func lowerBound(lat1: Double, lat2: Double, lon1: Double, width: Double) -> Double {
        max(0, Self.lowRadius * angle(lat1: lat1, lat2: lat2, lon1: lon1, width: width) - 1)
    }

    /// At least the ellipsoidal distance from the fix to the point.
    func upperBound(lat: Double, lon: Double) -> Double {
        let phi = lat * .pi / 180, d = Geodesy.wrapDegrees(lon - self.lon) * .pi / 180
        let c = sinLat * sin(phi) + cosLat * cos(phi) * cos(d)
        return Self.highRadius * acos(min(1, max(-1, c))) + 1
    }

    /// The least great-circle angle (radians) from the fix to the box, on the
    /// unit sphere in geodetic coordinates.
    ///
    /// When the fix's meridian crosses the box it is the latitude gap
    /// (nothing in the box is nearer than its nearest latitude). Otherwise the
    /// nearest point is on one of the box's two meridian sides: along a
    /// parallel the angle grows with the longitude difference, so a parallel
    /// side's nearest point is a corner. Along a meridian at longitude
    /// difference Δλ, cos θ(φ) = sinφ₀ sinφ + cosφ₀ cosΔλ cosφ = C cos(φ − φ*)
    /// peaks at φ* = atan2(sinφ₀, cosφ₀ cosΔλ); on a latitude interval its
    /// maximum is at φ* if that lies inside, else at an end.
    func angle(lat1: Double, lat2: Double, lon1: Double, width: Double) -> Double {
        let lo = min(lat1, lat2) * .pi / 180, hi = max(lat1, lat2) * .pi / 180
        let west = Geodesy.wrapDegrees(lon1 - lon)
        let east = west + width
        if (west <= 0 && east >= 0) || east >= 360 || width >= 360 {
            let phi0 = atan2(sinLat, cosLat)
            return max(0, lo - phi0, phi0 - hi)
        }
        let sinLo = sin(lo), cosLo = cos(lo), sinHi = sin(hi), cosHi = cos(hi)
        var best = -1.0
        for side in [west, east] {
            let b = cosLat * cos(side * .pi / 180)
            best = max(best, sinLat * sinLo + b * cosLo, sinLat * sinHi + b * cosHi)
            let peak = atan2(sinLat, b)
            if peak > lo && peak < hi { best = max(best, (sinLat * sinLat + b * b).squareRoot()) }
        }
        return acos(min(1, max(-1, best)))
    }
}
