import GeofenceCore
#if canImport(Glibc)
import Glibc
#endif

/// The areas nearest to a position, by geodesic distance to their boundary
/// (0 inside), found through the catalog's R*Tree.
///
/// How: ask the index for every area whose box meets the box of a circle of
/// radius r around the position. Each candidate gets a cheap lower bound (the
/// distance to its index box) and is looked at in order of that bound, only
/// while the bound could still beat the n-th best distance found: a polygon is
/// first read and given a `LocalEstimate` (exact containment and a tighter
/// bound, no edge index), and gets an exact distance only if it can still
/// enter. Once n areas lie within r, no unseen area can be nearer (its
/// nearest point would lie in the circle, so its box would meet the circle's
/// box), and the answer is final; otherwise r grows fourfold from 20 m.
public final class NearestAreas {
    public struct Found: Sendable {
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

    /// The first radius tried: in a dense city a 20 m box already meets hundreds of fences.
    static let startRadiusM = 20.0
    /// Beyond half the meridian every point on Earth is within r.
    static let worldRadiusM = 20_100_000.0

    /// Up to `count` areas nearest to `p`, nearest first (ties by area_id);
    /// with `at`, only areas valid at that time.
    public func nearest(to p: LonLat, count: Int, at time: Timestamp? = nil) throws -> [Found] {
        guard count > 0 else { return [] }
        var seen = Set<Int64>()
        // Candidates not yet measured, by lower bound (nearest last). A polygon
        // first gets the bound of its index box, then, once loaded, the bound of
        // a LocalEstimate; only one that can still enter gets an exact distance.
        var pending: [(bound: Double, id: Int64)] = []
        var loaded: [Int64: Loaded] = [:]
        var measured: [Found] = []                 // exact, sorted by (distance, area_id)
        func nth() -> Double { measured.count >= count ? measured[count - 1].distanceM : .infinity }
        func push(_ bound: Double, _ id: Int64) {
            let at = pending.firstIndex { $0.bound <= bound } ?? pending.count
            pending.insert((bound, id), at: at)
        }
        func add(_ f: Found) {
            let at = measured.firstIndex { ($0.distanceM, $0.areaId) > (f.distanceM, f.areaId) } ?? measured.count
            measured.insert(f, at: at)
            if measured.count > count { measured.removeLast() }
        }
        var r = Self.startRadiusM
        while true {
            let box = Geodesy.boundingBox(of: Circle(center: p, radiusM: r))
            for (id, b) in try candidates(in: box) where seen.insert(id).inserted {
                pending.append((Self.lowerBound(from: p, to: b), id))
            }
            pending.sort { $0.bound > $1.bound }
            while let next = pending.last, next.bound <= nth() {
                pending.removeLast()
                if let l = loaded.removeValue(forKey: next.id) {
                    add(Found(areaId: l.areaId, distanceM: try exactDistance(next.id, l, from: p),
                              shape: l.shape, validUntil: l.validUntil))
                    continue
                }
                guard let l = try load(next.id, at: time) else { continue }
                if case .polygons(let polys) = l.shape, let e = LocalEstimate(polys, from: p) {
                    if e.inside && e.lowerBoundM > 0 {
                        add(Found(areaId: l.areaId, distanceM: 0, shape: l.shape, validUntil: l.validUntil))
                    } else {
                        loaded[next.id] = l
                        push(max(next.bound, e.inside ? 0 : e.lowerBoundM), next.id)
                    }
                } else {
                    add(Found(areaId: l.areaId, distanceM: try exactDistance(next.id, l, from: p),
                              shape: l.shape, validUntil: l.validUntil))
                }
            }
            if r >= Self.worldRadiusM || nth() <= r { return measured }
            r = min(r * 4, Self.worldRadiusM)
        }
    }

    /// A distance no larger than the geodesic distance from `p` to any point of
    /// the box: degrees of latitude at the shortest meridian degree, degrees of
    /// longitude at the parallel nearest a pole, 1 % slack. Across the
    /// antimeridian or near a pole it falls back to latitude alone.
    static func lowerBound(from p: LonLat, to b: BoundingBox) -> Double {
        let dLat = max(0, b.minLat - p.lat, p.lat - b.maxLat)
        let latM = dLat * 110_574
        let dLonRaw = p.lon < b.minLon ? b.minLon - p.lon : (p.lon > b.maxLon ? p.lon - b.maxLon : 0)
        let dLon = min(dLonRaw, 360 - dLonRaw)
        let poleward = max(abs(p.lat), abs(b.minLat), abs(b.maxLat))
        guard dLon > 0, dLon < 30, poleward < 80 else { return latM * 0.99 }
        let lonM = dLon * 111_320 * cos(poleward * .pi / 180)
        return 0.99 * (latM * latM + lonM * lonM).squareRoot()
    }

    private func candidates(in b: BoundingBox) throws -> [(Int64, BoundingBox)] {
        if window == nil {
            window = try db.prepare("""
                SELECT pkid, xmin, xmax, ymin, ymax FROM idx_gf_areas_geom WHERE xmax >= ?1 AND xmin <= ?2 AND ymax >= ?3 AND ymin <= ?4
                """)
        }
        let s = window!
        try s.bind([.real(b.minLon), .real(b.maxLon), .real(b.minLat), .real(b.maxLat)])
        var out: [(Int64, BoundingBox)] = []
        while try s.step() {
            guard case .integer(let id) = s.value(0) else { continue }
            out.append((id, BoundingBox(minLon: s.value(1).double ?? -180, minLat: s.value(3).double ?? -90,
                                        maxLon: s.value(2).double ?? 180, maxLat: s.value(4).double ?? 90)))
        }
        return out
    }

    private struct Loaded {
        var areaId: String
        var shape: Shape
        var validUntil: Timestamp?
    }

    /// The area's id, shape and validity; nil if it is gone or not valid at `time`.
    private func load(_ id: Int64, at time: Timestamp?) throws -> Loaded? {
        let s = try rowStatement()
        try s.bind([.integer(id)])
        defer { s.reset() }
        guard try s.step(), let areaId = s.value(0).string else { return nil }
        let from = try s.value(5).string.map(Timestamp.parse), until = try s.value(6).string.map(Timestamp.parse)
        if let t = time, (from.map { t < $0 } ?? false) || (until.map { t > $0 } ?? false) { return nil }
        if s.value(1).string == "circle", let lat = s.value(2).double, let lon = s.value(3).double, let radius = s.value(4).double {
            return Loaded(areaId: areaId, shape: .circle(Circle(center: LonLat(lon: lon, lat: lat), radiusM: radius)), validUntil: until)
        }
        let polygons = try s.withBlob(7) { try SpatiaLiteBlob.decodeAreal($0).polygons }
        return Loaded(areaId: areaId, shape: .polygons(polygons), validUntil: until)
    }

    /// The exact distance (0 inside), through the content-keyed shape cache for polygons.
    private func exactDistance(_ id: Int64, _ l: Loaded, from p: LonLat) throws -> Double {
        let prepared: PreparedShape
        if case .polygons = l.shape {
            let s = try rowStatement()
            try s.bind([.integer(id)])
            defer { s.reset() }
            guard try s.step() else { return .infinity }
            prepared = s.withBlob(7) { bytes in cache.shape(for: bytes) { l.shape } }
        } else {
            prepared = PreparedShape(l.shape)
        }
        return max(0, -prepared.signedDistance(p))
    }

    private func rowStatement() throws -> Statement {
        if row == nil {
            row = try db.prepare("""
                SELECT area_id, kind, center_lat, center_lon, radius_m, valid_from, valid_until, geom FROM gf_areas WHERE id = ?
                """)
        }
        return row!
    }

    /// Statements are finalized here, before the connection closes.
    public func close() { window = nil; row = nil }
}
