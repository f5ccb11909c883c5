import GeofenceCore
#if canImport(Glibc)
import Glibc
#endif

/// The areas nearest to a position, by geodesic distance to their boundary
/// (0 inside), found through the catalog's R*Tree.
///
/// How: a best-first walk of the R*Tree (`RTreeNodes`). The frontier holds
/// index nodes and areas by a lower bound of their distance (that of their
/// box, `SphereBounds`, rigorous on the ellipsoid and across ±180°; a node's
/// box holds all its areas' boxes, so its bound is no larger than theirs),
/// and the nearest bound is taken next: a node is
/// replaced by its cells; a polygon is first read and given a
/// `LocalEstimate` (exact containment and a tighter bound, no edge index) and
/// goes back with it, and gets an exact distance only if it can still enter.
/// The walk ends when the nearest bound left is past the n-th best distance
/// found: nothing unseen can then enter. So a position far from every area
/// reads a few nodes down to the nearest ones, not every area within the
/// distance.
///
/// An index of another layout than SpatiaLite's is searched the plain way,
/// through the virtual table: every area whose box meets the box of a circle
/// of radius r around the position goes in the frontier, which is drained as
/// above; once n areas lie within r, no unseen area can be nearer (its
/// nearest point would lie in the circle, so its box would meet the circle's
/// box); otherwise r grows fourfold from 20 m. Both give the same answer.
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
    private var schemaVersion: Statement?
    private var tree: RTreeNodes?
    private var treeSchema: Int64?
    /// Where the statements above read the catalog, and the databases
    /// attached when they were made: an ATTACH or DETACH can move the catalog
    /// to another schema without changing main's schema_version, so each
    /// query compares the list and starts over when it moved.
    private var tables: CatalogTables?
    private var databases: Statement?
    private var attached: [String] = []

    init(_ db: Connection, cache: ShapeCache) { self.db = db; self.cache = cache }
    public convenience init(_ db: Connection) { self.init(db, cache: ShapeCache(capacity: 4096)) }

    /// The first radius tried by the plain search: in a dense city a 20 m box already meets hundreds of fences.
    static let startRadiusM = 20.0
    /// Beyond half the meridian every point on Earth is within r.
    static let worldRadiusM = 20_100_000.0

    /// An entry of the frontier: its box, and how far its bound has been
    /// tightened. A cell is queued with the bound of its latitudes alone
    /// (`SphereBounds.latitudeLowerBound`, no trigonometry: most cells of a
    /// node never reach the front); one that reaches it goes back with the
    /// box's bound (`lowerBound(to:)`), then, past `farFromM`, with the far
    /// bound (`farLowerBound`), each if larger, before it is opened.
    private struct Frontier {
        enum Kind {
            /// An index node and the depth of the cells it holds (0: areas).
            case node(Int64, depth: Int)
            case area(Int64)
        }
        var kind: Kind
        var box: BoundingBox?
        /// 0: latitudes only; 1: the box's bound; 2: the far bound too.
        var stage: UInt8 = 0
    }

    /// Where the box's bound (0.6 % short at worst) is more than ~100 m short.
    static let farFromM = 20_000.0

    /// One query's frontier and answer.
    private struct Search {
        let p: LonLat, count: Int, time: Timestamp?
        let bounds: SphereBounds
        /// Entries by place; the queue holds places, so that it moves 16 bytes, not an entry.
        var entries: [Frontier] = []
        var frontier = BoundQueue<Int>()

        mutating func enqueue(_ bound: Double, _ entry: Frontier) {
            entries.append(entry)
            frontier.push(bound, entries.count - 1)
        }
        var loaded: [Int64: Loaded] = [:]
        /// Areas read once: an index that lists one twice (damaged) gives it once.
        var opened = Set<Int64>()
        var measured: [Found] = []                 // exact, sorted by (distance, area_id)

        var nth: Double { measured.count >= count ? measured[count - 1].distanceM : .infinity }

        mutating func add(_ f: Found) {
            // Ties by area_id's bytes, as SQLite orders it (`utf8Precedes`).
            let at = measured.firstIndex { $0.distanceM > f.distanceM || ($0.distanceM == f.distanceM && f.areaId.utf8Precedes($0.areaId)) }
                ?? measured.count
            measured.insert(f, at: at)
            if measured.count > count { measured.removeLast() }
        }

        /// The cells of a node at `depth`: areas in a leaf, nodes one level down otherwise.
        mutating func push(_ cells: [RTreeNodes.Cell], depth: Int) {
            for c in cells {
                enqueue(bounds.latitudeLowerBound(to: c.box),
                        Frontier(kind: depth == 0 ? .area(c.id) : .node(c.id, depth: depth - 1), box: c.box))
            }
        }
    }

    /// Up to `count` areas nearest to `p`, nearest first (ties by area_id);
    /// with `at`, only areas valid at that time. A catalog of a newer schema
    /// is refused (`Schema.refuseNewer`).
    public func nearest(to p: LonLat, count: Int, at time: Timestamp? = nil) throws -> [Found] {
        try Schema.refuseNewer(db, in: try catalogTables())
        guard count > 0 else { return [] }
        var search = Search(p: p, count: count, time: time, bounds: SphereBounds(p))
        if let tree = try treeReader() {
            tree.beginWalk()
            let root = try tree.root()
            search.push(root.cells, depth: root.depth)
            try drain(&search, tree)
            return search.measured
        }
        var seen = Set<Int64>()
        var r = Self.startRadiusM
        while true {
            let box = Geodesy.boundingBox(of: Circle(center: p, radiusM: r))
            for (id, b) in try candidates(in: box) where seen.insert(id).inserted {
                search.enqueue(search.bounds.lowerBound(to: b), Frontier(kind: .area(id), box: b, stage: 1))
            }
            try drain(&search, nil)
            if r >= Self.worldRadiusM || search.nth <= r { return search.measured }
            r = min(r * 4, Self.worldRadiusM)
        }
    }

    /// Takes the frontier's nearest entry while it could still enter the answer.
    private func drain(_ s: inout Search, _ tree: RTreeNodes?) throws {
        while s.frontier.minBound <= s.nth, let (bound, place) = s.frontier.pop() {
            var next = s.entries[place]
            // Before an entry is opened, its bound is tightened (`Frontier`);
            // if it grew, the entry goes back (far from the catalog, most
            // then never come back).
            if next.stage < 2, let box = next.box {
                var tighter = bound
                if next.stage == 0 {
                    tighter = max(tighter, s.bounds.lowerBound(to: box))
                    next.stage = 1
                }
                if tighter > Self.farFromM {
                    tighter = max(tighter, s.bounds.farLowerBound(to: box) ?? 0)
                    next.stage = 2
                }
                s.entries[place] = next
                if tighter > bound {
                    s.frontier.push(tighter, place)
                    continue
                }
            }
            let id: Int64
            switch next.kind {
            case .node(let number, let depth):
                guard let tree else { continue }
                s.push(try tree.cells(ofNode: number), depth: depth)
                continue
            case .area(let area):
                id = area
            }
            if let l = s.loaded.removeValue(forKey: id) {
                s.add(Found(areaId: l.areaId, distanceM: try exactDistance(id, l, from: s.p), shape: l.shape, validUntil: l.validUntil))
                continue
            }
            guard s.opened.insert(id).inserted else { continue }
            guard let l = try load(id, at: s.time) else { continue }
            if case .polygons(let polys) = l.shape, let e = LocalEstimate(polys, from: s.p) {
                if e.inside && e.lowerBoundM > 0 {
                    s.add(Found(areaId: l.areaId, distanceM: 0, shape: l.shape, validUntil: l.validUntil))
                } else {
                    s.loaded[id] = l
                    s.enqueue(max(bound, e.inside ? 0 : e.lowerBoundM), Frontier(kind: .area(id), box: nil, stage: 2))
                }
            } else {
                s.add(Found(areaId: l.areaId, distanceM: try exactDistance(id, l, from: s.p), shape: l.shape, validUntil: l.validUntil))
            }
        }
    }

    /// The catalog's tables; the statements made for an earlier place dropped if the attached databases changed.
    private func catalogTables() throws -> CatalogTables {
        if databases == nil { databases = try db.prepare("PRAGMA database_list") }
        let s = databases!
        defer { s.reset() }
        var now: [String] = []
        while try s.step() { now.append("\(s.value(1).string ?? "")\u{0}\(s.value(2).string ?? "")") }
        if let tables, now == attached { return tables }
        (window, row, schemaVersion, tree, treeSchema) = (nil, nil, nil, nil, nil)
        let found = try CatalogTables(db)
        (tables, attached) = (found, now)
        return found
    }

    /// The node reader while the schema is unchanged; nil for an index of another layout.
    private func treeReader() throws -> RTreeNodes? {
        if schemaVersion == nil { schemaVersion = try db.prepare("PRAGMA schema_version") }
        let s = schemaVersion!
        defer { s.reset() }
        guard try s.step(), let version = s.value(0).int64 else { return nil }
        if version != treeSchema { tree = try RTreeNodes.open(db, try catalogTables()); treeSchema = version }
        return tree
    }

    private func candidates(in b: BoundingBox) throws -> [(Int64, BoundingBox)] {
        if window == nil {
            window = try db.prepare("""
                SELECT pkid, \(RTreeBoxColumns.list()) FROM \(try catalogTables().index) WHERE xmax >= ?1 AND xmin <= ?2 AND ymax >= ?3 AND ymin <= ?4
                """)
        }
        let s = window!
        try s.bind([.real(b.minLon), .real(b.maxLon), .real(b.minLat), .real(b.maxLat)])
        var out: [(Int64, BoundingBox)] = []
        while try s.step() {
            guard case .integer(let id) = s.value(0) else { continue }
            out.append((id, s.rtreeBox(from: 1)))
        }
        return out
    }

    private enum LoadColumn: Int, NamedColumns { case area_id, kind, center_lat, center_lon, radius_m, valid_from, valid_until, geom }

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
        guard try s.step() else { return nil }
        let areaId = try CatalogError.areaId(s, LoadColumn.area_id.rawValue, row: id)
        let from = try s.value(LoadColumn.valid_from).string.map(Timestamp.parse)
        let until = try s.value(LoadColumn.valid_until).string.map(Timestamp.parse)
        if let t = time, (from.map { t < $0 } ?? false) || (until.map { t > $0 } ?? false) { return nil }
        if s.value(LoadColumn.kind).string == "circle", let lat = s.value(LoadColumn.center_lat).double,
           let lon = s.value(LoadColumn.center_lon).double, let radius = s.value(LoadColumn.radius_m).double {
            return Loaded(areaId: areaId, shape: .circle(Circle(center: LonLat(lon: lon, lat: lat), radiusM: radius)), validUntil: until)
        }
        let polygons = try s.withBlob(LoadColumn.geom.rawValue) { try SpatiaLiteBlob.decodeAreal($0).polygons }
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
        let d = -prepared.signedDistance(p)
        return d > 0 ? d : 0   // never -0.0 (a position on the boundary), which prints as "-0.0"
    }

    private func rowStatement() throws -> Statement {
        if row == nil {
            row = try db.prepare("""
                SELECT \(LoadColumn.list) FROM \(try catalogTables().areas) WHERE id = ?
                """)
        }
        return row!
    }

    /// Statements are finalized here, before the connection closes.
    public func close() { window = nil; row = nil; schemaVersion = nil; tree = nil; treeSchema = nil; tables = nil; databases = nil }
}
