#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A circle area drawn as a polygon, for files and tools that have no
/// circles (GIS formats, QGIS), and the check that a polygon read back is
/// still the circle it was drawn from.
///
/// The rule: every vertex lies on the geodesic circle (computed on the WGS 84
/// ellipsoid by `Geodesy.destination`), and there are enough of them that the
/// polygon, its edges drawn as straight lines in longitude/latitude as GIS
/// tools draw them, stays within `tolerance(radius:)` of the circle: 0.1 m,
/// or a hundred-thousandth of the radius when that is more (1 m for a 100 km
/// circle). The distance is measured at every vertex and at the middle of
/// every edge, where a chord strays furthest from its arc. The ring starts
/// due north of the centre and runs counter-clockwise (RFC 7946's exterior
/// order), its first vertex repeated as the last.
///
/// A circle that crosses the antimeridian or comes near a pole has no such
/// ring in longitude/latitude (its outline would wrap); `ring(tracing:)` gives
/// nil for it, and callers keep it a circle (a point with a radius).
public enum CirclePolygon {
    /// How far from its circle a traced polygon may stray, in metres.
    public static func tolerance(radius: Double) -> Double { max(0.1, radius * 1e-5) }

    /// The most vertices a ring gets; a circle needing more has no ring.
    static let maxVertices = 1 << 16

    /// The closed ring tracing `c`, or nil when the circle cannot be traced
    /// in longitude/latitude (across the antimeridian, near a pole).
    public static func ring(tracing c: Circle) -> Ring? {
        let box = Geodesy.boundingBox(of: c)
        guard box.minLon > -180, box.maxLon < 180, box.minLat > -90, box.maxLat < 90 else { return nil }
        let tol = tolerance(radius: c.radiusM)
        // A chord of angle 2π/n on a circle of radius r sags r·(1 − cos(π/n)) below its arc.
        let sag = min(1, tol / c.radiusM)
        var n = max(8, Int((Double.pi / acos(1 - sag)).rounded(.up)))
        n = (n + 7) / 8 * 8
        while n <= maxVertices {
            guard let ring = vertices(c, count: n) else { return nil }
            if deviation(of: ring, from: c).metres <= tol { return ring }
            n *= 2
        }
        return nil
    }

    /// The ring of `count` vertices on `c`, nil when one cannot be computed
    /// or two neighbours are more than 180° of longitude apart (a wrap).
    static func vertices(_ c: Circle, count: Int) -> Ring? {
        var points: [LonLat] = []
        points.reserveCapacity(count + 1)
        for k in 0..<count {
            // Decreasing azimuth: north, west, south, east — counter-clockwise on the map.
            let azimuth = -2 * Double.pi * Double(k) / Double(count)
            guard let p = Geodesy.destination(from: c.center, azimuth: azimuth, distance: c.radiusM) else { return nil }
            if let last = points.last, abs(p.lon - last.lon) > 180 { return nil }
            points.append(p)
        }
        points.append(points[0])
        return Ring(points)
    }

    /// Where a ring strays furthest from a circle: by how many metres, and at
    /// which vertex (or the middle of the edge that starts there).
    public struct Deviation: Equatable, Sendable {
        public var metres: Double
        public var vertex: Int
        public var atEdgeMiddle: Bool
    }

    /// The largest distance between `ring` and the circle `c`, measured at
    /// every vertex and the middle of every edge (in longitude/latitude).
    public static func deviation(of ring: Ring, from c: Circle) -> Deviation {
        var worst = Deviation(metres: 0, vertex: 0, atEdgeMiddle: false)
        let pts = ring.points
        for (k, p) in pts.enumerated() {
            let d = abs(Geodesy.distance(c.center, p) - c.radiusM)
            if !(d <= worst.metres) { worst = Deviation(metres: d, vertex: k, atEdgeMiddle: false) }
            guard k + 1 < pts.count else { break }
            let q = pts[k + 1]
            let middle = LonLat(lon: (p.lon + q.lon) / 2, lat: (p.lat + q.lat) / 2)
            let m = abs(Geodesy.distance(c.center, middle) - c.radiusM)
            if !(m <= worst.metres) { worst = Deviation(metres: m, vertex: k, atEdgeMiddle: true) }
        }
        return worst
    }
}
