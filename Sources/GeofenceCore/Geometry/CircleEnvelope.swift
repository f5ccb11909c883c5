#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The polygon stored in `geom` for a circle: a 32-gon that contains it, so the
/// R*Tree and GIS tools see the circle's extent. Judgement uses the exact circle.
///
/// A circle across the antimeridian gets two parts, one each side of ±180,
/// split where the 32-gon's edges cross it (the same latitudes on both
/// sides, so that the engine reads them as one shape, as it reads any
/// MultiPolygon split at ±180). A circle near a pole, or wider than the
/// whole range of longitudes, gets its bounding box instead.
///
/// Stored, the single 32-gon is compressed (`blob`): its vertices are derived,
/// not the user's, and the slack that makes it enclose the circle also takes
/// the rounding of the compressed form: at most 6e-8 of an edge, a
/// micrometre on a 100 m circle, against a slack of a metre.
public enum CircleEnvelope {
    /// The vertices of the 32-gon; its ring has one more, the first repeated.
    static let sides = 32

    /// The `geom` BLOB of a circle (what gf_areas stores): its polygons as
    /// `polygons` gives them, the single 32-gon in SpatiaLite's compressed
    /// form (341 bytes instead of 589; every SpatiaLite function and
    /// `SpatiaLiteBlob.decodeAreal` read it). The two parts across the
    /// antimeridian and the box near a pole stay exact: their vertices on
    /// ±180 and on the box's edges have no slack to round into.
    public static func blob(_ c: Circle) -> [UInt8] {
        let parts = polygons(c)
        if parts.count == 1, parts[0].rings.count == 1, parts[0].rings[0].points.count == sides + 1,
           let compressed = SpatiaLiteBlob.encodeCompressedMultiPolygon(parts) {
            return compressed
        }
        return SpatiaLiteBlob.encodeMultiPolygon(parts)
    }

    /// The polygons that enclose `c`: the 32-gon, its two parts across the
    /// antimeridian, or the bounding box near a pole (see the type's comment).
    public static func polygons(_ c: Circle) -> [Polygon] {
        let b = Geodesy.boundingBox(of: c)
        if b.maxLat >= 89.9 || b.minLat <= -89.9 { return [box(b)] }
        var points = gon(c)
        let lons = points.map(\.lon)
        guard let west = lons.min(), let east = lons.max(), east - west < 360 else { return [box(b)] }
        if west >= -180 && east <= 180 { return [Polygon([Ring(points)])] }
        // Across the antimeridian: taken to the east side (lon up to 540), cut at 180.
        if west < -180 { points = points.map { LonLat(lon: $0.lon + 360, lat: $0.lat) } }
        let eastern = clip(points, keepingWest: true)
        let western = clip(points, keepingWest: false).map { LonLat(lon: $0.lon - 360, lat: $0.lat) }
        return [Polygon([Ring(eastern)]), Polygon([Ring(western)])]
    }

    /// The circumscribed 32-gon, closed, with longitudes not wrapped (they may pass ±180).
    static func gon(_ c: Circle) -> [LonLat] {
        let n = sides
        let m = WGS84.metresPerDegree(atLat: c.center.lat)
        // Circumscribed polygon (1/cos(π/n)) with 1 % slack for the frame's approximation.
        let r = c.radiusM / cos(Double.pi / Double(n)) * 1.01
        var pts: [LonLat] = []
        for i in 0...n {
            let theta = 2 * Double.pi * Double(i % n) / Double(n)
            let lat = max(-90, min(90, c.center.lat + r * cos(theta) / m.lat))
            let scale = WGS84.metresPerDegree(atLat: abs(lat) > abs(c.center.lat) ? lat : c.center.lat).lon
            pts.append(LonLat(lon: c.center.lon + r * sin(theta) / scale, lat: lat))
        }
        return pts
    }

    /// The part of a closed ring west (or east) of longitude 180 (Sutherland–Hodgman
    /// against one line), closed. A crossing point is computed from the edge's
    /// ends in ring order, so both parts get exactly the same latitudes on the cut.
    static func clip(_ ring: [LonLat], keepingWest: Bool) -> [LonLat] {
        func kept(_ p: LonLat) -> Bool { keepingWest ? p.lon <= 180 : p.lon >= 180 }
        var out: [LonLat] = []
        for (p, q) in zip(ring, ring.dropFirst()) {
            if kept(p) { out.append(p) }
            if (p.lon < 180) != (q.lon < 180) && p.lon != 180 && q.lon != 180 {
                let t = (180 - p.lon) / (q.lon - p.lon)
                out.append(LonLat(lon: 180, lat: p.lat + t * (q.lat - p.lat)))
            }
        }
        if let first = out.first { out.append(first) }
        return out
    }

    static func box(_ b: BoundingBox) -> Polygon {
        Polygon([Ring([LonLat(lon: b.minLon, lat: b.minLat), LonLat(lon: b.maxLon, lat: b.minLat),
                       LonLat(lon: b.maxLon, lat: b.maxLat), LonLat(lon: b.minLon, lat: b.maxLat),
                       LonLat(lon: b.minLon, lat: b.minLat)])])
    }
}
