#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A quick look at polygons from a point, before paying for a PreparedShape:
/// containment (exact: lon/lat is mapped linearly to a local metric frame, so
/// straight edges stay straight) and a lower bound of the geodesic distance to
/// the boundary (the local frame's distance, less a margin for its scale
/// error). Used by nearest-area searches to settle most candidates without
/// building an edge index. Nil when the frame would not be trustworthy: far
/// from the point, near a pole, or across the antimeridian from it.
public struct LocalEstimate: Equatable, Sendable {
    public var inside: Bool
    /// At most the true distance to the nearest edge (holes and parts included).
    public var lowerBoundM: Double

    /// Beyond this the frame's scale error is no longer covered by the margin.
    static let reachM = 20_000.0

    public init?(_ polygons: [Polygon], from p: LonLat) {
        guard abs(p.lat) < 70 else { return nil }
        let m = WGS84.metresPerDegree(atLat: p.lat)
        var crossings = 0
        var best = Double.infinity
        for poly in polygons {
            for ring in poly.rings {
                let pts = ring.points
                guard pts.count >= 2 else { continue }
                // Longitudes are not wrapped: edges are straight in plain lon/lat (an
                // edge from 179.9 to -179.9 spans the globe), so a ring across the
                // antimeridian from the point is left to the exact computation.
                guard abs(pts[0].lon - p.lon) <= 90 else { return nil }
                var px = (pts[0].lon - p.lon) * m.lon, py = (pts[0].lat - p.lat) * m.lat
                for k in 1..<pts.count {
                    let dLon = pts[k].lon - p.lon
                    guard abs(dLon) <= 90 else { return nil }
                    let x = dLon * m.lon, y = (pts[k].lat - p.lat) * m.lat
                    // Even-odd crossing of the ray from the origin towards +x.
                    if (py > 0) != (y > 0), px + (0 - py) * (x - px) / (y - py) > 0 { crossings += 1 }
                    best = min(best, Self.segmentDistance(px, py, x, y))
                    px = x; py = y
                }
            }
        }
        guard best < Self.reachM else { return nil }
        inside = crossings % 2 == 1
        // The frame's scale drifts by under 2 % within reach below 70°.
        lowerBoundM = max(0, best * 0.97 - 0.5)
    }

    static func segmentDistance(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double) -> Double {
        let dx = bx - ax, dy = by - ay
        let len2 = dx * dx + dy * dy
        let t = len2 > 0 ? max(0, min(1, -(ax * dx + ay * dy) / len2)) : 0
        let x = ax + t * dx, y = ay + t * dy
        return (x * x + y * y).squareRoot()
    }
}
