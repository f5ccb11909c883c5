#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The polygon stored in `geom` for a circle: a 32-gon that contains it, so the
/// R*Tree and GIS tools see the circle's extent. Judgement uses the exact circle.
public enum CircleEnvelope {
    public static func polygons(_ c: Circle) -> [Polygon] {
        let b = Geodesy.boundingBox(of: c)
        if b.minLon == -180 && b.maxLon == 180 || b.maxLat >= 89.9 || b.minLat <= -89.9 {
            return [box(b)]
        }
        let n = 32
        let m = WGS84.metresPerDegree(atLat: c.center.lat)
        // Circumscribed polygon (1/cos(π/n)) with 1 % slack for the frame's approximation.
        let r = c.radiusM / cos(Double.pi / Double(n)) * 1.01
        var pts: [LonLat] = []
        for i in 0...n {
            let theta = 2 * Double.pi * Double(i % n) / Double(n)
            let lat = max(-90, min(90, c.center.lat + r * cos(theta) / m.lat))
            let scale = WGS84.metresPerDegree(atLat: abs(lat) > abs(c.center.lat) ? lat : c.center.lat).lon
            pts.append(LonLat(lon: max(-180, min(180, c.center.lon + r * sin(theta) / scale)), lat: lat))
        }
        return [Polygon([Ring(pts)])]
    }

    static func box(_ b: BoundingBox) -> Polygon {
        Polygon([Ring([LonLat(lon: b.minLon, lat: b.minLat), LonLat(lon: b.maxLon, lat: b.minLat),
                       LonLat(lon: b.maxLon, lat: b.maxLat), LonLat(lon: b.minLon, lat: b.maxLat),
                       LonLat(lon: b.minLon, lat: b.minLat)])])
    }
}
