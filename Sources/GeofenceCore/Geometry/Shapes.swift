// The shapes an area can have (behaviour §1): polygons with holes, multipolygons,
// and circles given by a centre and a radius on the WGS 84 ellipsoid.
// Coordinates are degrees, longitude first as in GeoJSON and SpatiaLite.

public struct LonLat: Equatable, Sendable {
    public var lon: Double
    public var lat: Double
    public init(lon: Double, lat: Double) { self.lon = lon; self.lat = lat }
}

public struct BoundingBox: Equatable, Sendable {
    public var minLon, minLat, maxLon, maxLat: Double
    public init(minLon: Double, minLat: Double, maxLon: Double, maxLat: Double) {
        self.minLon = minLon; self.minLat = minLat; self.maxLon = maxLon; self.maxLat = maxLat
    }
    public static let empty = BoundingBox(minLon: .infinity, minLat: .infinity, maxLon: -.infinity, maxLat: -.infinity)
    public mutating func add(_ p: LonLat) {
        minLon = Swift.min(minLon, p.lon); maxLon = Swift.max(maxLon, p.lon)
        minLat = Swift.min(minLat, p.lat); maxLat = Swift.max(maxLat, p.lat)
    }
}

/// A closed ring: the first point is repeated as the last (GeoJSON and SpatiaLite keep it so).
public struct Ring: Equatable, Sendable {
    public var points: [LonLat]
    public init(_ points: [LonLat]) { self.points = points }
}

/// Exterior ring first, then holes.
public struct Polygon: Equatable, Sendable {
    public var rings: [Ring]
    public init(_ rings: [Ring]) { self.rings = rings }
}

public struct Circle: Equatable, Sendable {
    public var center: LonLat
    public var radiusM: Double
    public init(center: LonLat, radiusM: Double) { self.center = center; self.radiusM = radiusM }
}

public enum Shape: Equatable, Sendable {
    /// One or more polygons; a GeoJSON Polygon is a list of one.
    case polygons([Polygon])
    case circle(Circle)

    /// False for a shape that holds no point: no polygon, no ring, or only
    /// exterior rings of zero area (all on one point or one line). Such a
    /// shape has a boundary but nothing inside it, so every fix is outside it
    /// however close (`gf_contains` 0, never undecided).
    public var hasInterior: Bool {
        switch self {
        case .circle: return true
        case .polygons(let polys):
            return polys.contains { poly in
                guard let ring = poly.rings.first, ring.points.count >= 4 else { return false }
                // Twice the planar (lon/lat) area, by the shoelace formula about the first point.
                let o = ring.points[0]
                var twice = 0.0
                for k in 1..<(ring.points.count - 1) {
                    let a = ring.points[k], b = ring.points[k + 1]
                    twice += (a.lon - o.lon) * (b.lat - o.lat) - (b.lon - o.lon) * (a.lat - o.lat)
                }
                return twice != 0
            }
        }
    }

    public var boundingBox: BoundingBox {
        switch self {
        case .polygons(let polys):
            var b = BoundingBox.empty
            for poly in polys { for ring in poly.rings { for p in ring.points { b.add(p) } } }
            return b
        case .circle(let c):
            return Geodesy.boundingBox(of: c)
        }
    }
}
