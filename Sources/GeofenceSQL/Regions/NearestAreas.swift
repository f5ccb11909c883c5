import GeofenceCore

/// The areas nearest to a position, by geodesic distance to their boundary
/// (0 inside), found through the catalog's R*Tree.
///
/// How: ask the index for every area whose box meets the box of a circle of
/// radius r around the position; measure each exactly; once at least
/// `count` of them lie within r, no unseen area can be nearer (its nearest
/// point would lie in that circle, so its box would meet the circle's box),
/// and the answer is final. Otherwise r grows fourfold. A 1M-fence catalog
/// usually settles in one or two index queries.
public final class NearestAreas {
    public struct Found: Sendable {
        public var rowid: Int64
        public var areaId: String
        public var distanceM: Double
        public var shape: Shape
        public var validUntil: Timestamp?
    }

    let db: Connection
    let cache: ShapeCache
    private var window: Statement?
    private var row: Statement?

    init(_ db: Connection, cache: ShapeCache) { self.db = db; self.cache = cache }
    public convenience init(_ db: Connection) { self.init(db, cache: ShapeCache(capacity: 4096)) }

    /// The first radius tried: city fences are usually a few hundred metres apart.
    static let startRadiusM = 500.0
    /// Beyond half the meridian every point on Earth is within r.
    static let worldRadiusM = 20_100_000.0

    /// Up to `count` areas nearest to `p`, nearest first (ties by area_id);
    /// with `at`, only areas valid at that time.
    public func nearest(to p: LonLat, count: Int, at time: Timestamp? = nil) throws -> [Found] {
        guard count > 0 else { return [] }
        var seen: [Int64: Found?] = [:]
        var r = Self.startRadiusM
        while true {
            let box = Geodesy.boundingBox(of: Circle(center: p, radiusM: r))
            for id in try candidates(in: box) where seen[id] == nil {
                seen[id] = try measure(id, from: p, at: time)
            }
            let found = seen.values.compactMap { $0 }
            if r >= Self.worldRadiusM || found.lazy.filter({ $0.distanceM <= r }).count >= count {
                let sorted = found.sorted { ($0.distanceM, $0.areaId) < ($1.distanceM, $1.areaId) }
                return Array(sorted.prefix(count))
            }
            r = min(r * 4, Self.worldRadiusM)
        }
    }

    private func candidates(in b: BoundingBox) throws -> [Int64] {
        if window == nil {
            window = try db.prepare("""
                SELECT pkid FROM idx_gf_areas_geom WHERE xmax >= ?1 AND xmin <= ?2 AND ymax >= ?3 AND ymin <= ?4
                """)
        }
        let s = window!
        try s.bind([.real(b.minLon), .real(b.maxLon), .real(b.minLat), .real(b.maxLat)])
        var ids: [Int64] = []
        while try s.step() { if case .integer(let id) = s.value(0) { ids.append(id) } }
        return ids
    }

    private func measure(_ id: Int64, from p: LonLat, at time: Timestamp?) throws -> Found? {
        if row == nil {
            row = try db.prepare("""
                SELECT area_id, kind, center_lat, center_lon, radius_m, valid_from, valid_until, geom FROM gf_areas WHERE id = ?
                """)
        }
        let s = row!
        try s.bind([.integer(id)])
        defer { s.reset() }
        guard try s.step(), let areaId = s.value(0).string else { return nil }
        let from = try s.value(5).string.map(Timestamp.parse), until = try s.value(6).string.map(Timestamp.parse)
        if let t = time, (from.map { t < $0 } ?? false) || (until.map { t > $0 } ?? false) { return nil }
        let prepared: PreparedShape
        if s.value(1).string == "circle", let lat = s.value(2).double, let lon = s.value(3).double, let radius = s.value(4).double {
            prepared = PreparedShape(.circle(Circle(center: LonLat(lon: lon, lat: lat), radiusM: radius)))
        } else {
            prepared = try s.withBlob(7) { bytes in
                try cache.shape(for: bytes) { .polygons(try SpatiaLiteBlob.decodeAreal(bytes).polygons) }
            }
        }
        return Found(rowid: id, areaId: areaId, distanceM: max(0, -prepared.signedDistance(p)), shape: prepared.shape, validUntil: until)
    }

    /// Statements are finalized here, before the connection closes.
    public func close() { window = nil; row = nil }
}
