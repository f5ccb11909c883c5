#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A shape made ready for many point queries: polygon edges flattened into
/// one array and bucketed by latitude band, so a containment test touches only
/// the edges that cross the fix's latitude, and a distance only the bands
/// near the fix (PreparedShape+Distance.swift).
///
/// Semantics (behaviour §1, §3):
/// - Edges are straight lines in lon/lat, as in RFC 7946, GEOS and SpatiaLite.
///   Containment is the even-odd rule over all rings, which for a valid
///   (multi)polygon is GEOS's interior: a point on the boundary is outside.
/// - Distances are geodesic metres on WGS 84 from the fix to the nearest point
///   of the boundary.
/// - A shape cut at the antimeridian (parts touching both +180 and -180) is one
///   area: the stretches of its edges along ±180 that meet across are not
///   boundary (AntimeridianSeam; an edge partly matched is stored as its
///   pieces); nor are edges along latitude ±90, which are the pole.
/// - A point on a boundary edge or vertex is outside, whatever the edge's
///   direction (PointLocator, exact).
///
/// Memory: the edges, the band index and the cut flags live in one block, so
/// a query on a shape that is not in the CPU cache pays for one block, not for
/// five arrays each behind its own header (most queries in a large catalog
/// meet a shape that is cold).
public final class PreparedShape: @unchecked Sendable {
    public let shape: Shape
    public let boundingBox: BoundingBox
    public let edgeCount: Int
    let circle: Circle?
    /// sin and cos of a circle's centre latitude (0, 1 for a polygon).
    let centreSinCos: (sin: Double, cos: Double)

    // Polygon edges, 4 doubles each: lon1, lat1, lon2, lat2.
    let edges: UnsafeMutablePointer<Double>
    // Latitude bands: edges whose latitude span meets band b are
    // bandEdges[bandStarts[b]..<bandStarts[b+1]].
    let bandCount: Int
    let bandMinLat: Double
    let bandHeight: Double
    let bandStarts: UnsafeMutablePointer<Int32>
    let bandEdges: UnsafeMutablePointer<Int32>
    // Edges that are not boundary (the matched cut at ±180°, polar edges); nil when there are none.
    let cutEdges: UnsafeMutablePointer<Bool>?
    private let block: UnsafeMutableRawPointer

    // Edge index of the first edge of each ring, plus a final sentinel; per ring,
    // whether it is its polygon's exterior. Only the probability integral reads them.
    private let ringStarts: [Int]
    private let ringIsExterior: [Bool]

    public init(_ shape: Shape) {
        self.shape = shape
        self.boundingBox = shape.boundingBox
        var e: [Double] = []
        var starts: [Int] = []
        var exterior: [Bool] = []
        // Per edge, whether it is not boundary: the matched cut at ±180
        // (AntimeridianSeam) and polar edges (Edge.isPolar).
        var notBoundary: [Bool] = []
        var anyNotBoundary = false
        if case .polygons(let polygons) = shape {
            circle = nil
            let seam = AntimeridianSeam(polygons)
            func append(_ a: LonLat, _ b: LonLat, cut: Bool) {
                e.append(a.lon); e.append(a.lat); e.append(b.lon); e.append(b.lat)
                let skip = cut || Edge(a.lon, a.lat, b.lon, b.lat).isPolar
                notBoundary.append(skip)
                if skip { anyNotBoundary = true }
            }
            for poly in polygons {
                for (ri, ring) in poly.rings.enumerated() {
                    starts.append(e.count / 4)
                    exterior.append(ri == 0)
                    let pts = ring.points
                    guard pts.count >= 2 else { continue }
                    for i in 0..<(pts.count - 1) {
                        let a = pts[i], b = pts[i + 1]
                        if seam.hasCut && AntimeridianSeam.isAlongAntimeridian(a, b) {
                            for piece in seam.pieces(a, b) { append(piece.a, piece.b, cut: piece.cut) }
                        } else {
                            append(a, b, cut: false)
                        }
                    }
                }
            }
        } else if case .circle(let c) = shape {
            circle = c
        } else {
            circle = nil
        }
        let phi = (circle?.center.lat ?? 0) * .pi / 180
        centreSinCos = (sin(phi), cos(phi))
        starts.append(e.count / 4)
        ringStarts = starts; ringIsExterior = exterior
        let n = e.count / 4
        edgeCount = n
        let cut: [Bool]? = anyNotBoundary ? notBoundary : nil

        // Bands: about four edges per band, at most 4096; fewer when long edges
        // would put one edge into many bands (a comb of tall teeth), so the
        // index stays within 16 entries per edge.
        let bbox = boundingBox
        var bands = max(1, min(4096, n / 4))
        var height = 1.0
        var counts: [Int32] = []
        func bandRange(_ i: Int) -> ClosedRange<Int> {
            let lo = min(e[4 * i + 1], e[4 * i + 3]), hi = max(e[4 * i + 1], e[4 * i + 3])
            return clampedIndex((lo - bbox.minLat) / height, bands)...clampedIndex((hi - bbox.minLat) / height, bands)
        }
        while n > 0 {
            height = max((bbox.maxLat - bbox.minLat) / Double(bands), 1e-12)
            counts = [Int32](repeating: 0, count: bands + 1)
            var total = 0
            for i in 0..<n { let r = bandRange(i); total += r.count; for b in r { counts[b + 1] += 1 } }
            if total <= 16 * n + 64 || bands == 1 { break }
            bands = max(1, bands / 4)
        }
        if n == 0 { counts = [0, 0] }
        for b in 0..<bands { counts[b + 1] += counts[b] }
        let members = Int(counts[bands])

        // One block: edges, band starts, band members, cut flags.
        let edgeBytes = 32 * n, startBytes = 4 * (bands + 1), memberBytes = 4 * members
        let cutBytes = cut == nil ? 0 : n
        block = UnsafeMutableRawPointer.allocate(byteCount: max(1, edgeBytes + startBytes + memberBytes + cutBytes), alignment: 8)
        edges = block.bindMemory(to: Double.self, capacity: 4 * n)
        edges.initialize(from: e, count: 4 * n)
        bandStarts = (block + edgeBytes).bindMemory(to: Int32.self, capacity: bands + 1)
        bandStarts.initialize(from: counts, count: bands + 1)
        bandEdges = (block + edgeBytes + startBytes).bindMemory(to: Int32.self, capacity: members)
        var fill = counts
        for i in 0..<n { for b in bandRange(i) { bandEdges[Int(fill[b])] = Int32(i); fill[b] += 1 } }
        if let cut {
            let flags = (block + edgeBytes + startBytes + memberBytes).bindMemory(to: Bool.self, capacity: n)
            flags.initialize(from: cut, count: n)
            cutEdges = flags
        } else {
            cutEdges = nil
        }
        bandCount = bands; bandMinLat = bbox.minLat; bandHeight = height
    }

    deinit { block.deallocate() }

    /// Whether edge i is not boundary (a matched cut at ±180, a polar edge).
    @inline(__always)
    func isCut(_ i: Int) -> Bool { cutEdges?[i] ?? false }

    // MARK: Containment

    /// True when the point is in the interior (boundary points are outside, as in GEOS).
    public func contains(_ p: LonLat) -> Bool { location(of: p) == .inside }

    /// Interior, exterior or boundary (PointLocator's rules). The band of the
    /// point's latitude lists every edge whose latitude span holds it.
    public func location(of p: LonLat) -> PointLocation {
        if let c = circle { return Self.circleLocation(c, p.canonical, centreSinCos: centreSinCos) }
        var locator = PointLocator(p)
        guard inBox(locator.q) || locator.east.map(inBox) == true else { return .outside }
        let band = clampedIndex((p.lat - bandMinLat) / bandHeight, bandCount)
        for k in Int(bandStarts[band])..<Int(bandStarts[band + 1]) {
            let i = Int(bandEdges[k])
            locator.visit(edge(i), isBoundary: !isCut(i))
            if locator.onBoundary { return .boundary }
        }
        return locator.parity && inBox(locator.q) ? .inside : .outside
    }

    /// At latitude ±90 every longitude is the pole: only the latitude counts.
    @inline(__always)
    private func inBox(_ p: LonLat) -> Bool {
        let b = boundingBox
        return p.lat >= b.minLat && p.lat <= b.maxLat && (abs(p.lat) == 90 || (p.lon >= b.minLon && p.lon <= b.maxLon))
    }

    /// Clear cases without Vincenty: within a degree of the centre, a flat
    /// frame scaled at the mid-latitude measures the distance to well under
    /// 0.1 %; only a point within 0.5 % + 0.5 m of the circle gets the exact
    /// ellipsoidal distance. (Most judged fixes are nowhere near a boundary.)
    ///
    /// The mid-latitude's sine and cosine come from the centre's, which the
    /// shape keeps, by the angle-sum formulas with the half difference h
    /// (under half a degree, 0.0087 rad): sin h and cos h by their series to
    /// h⁵ and h⁴, whose remainders (below 1e-17) vanish in rounding: a sin
    /// and a cos per call would be a large share of judging against circles.
    static func circleContains(_ c: Circle, _ p: LonLat, centreSinCos sc: (sin: Double, cos: Double)) -> Bool {
        circleLocation(c, p, centreSinCos: sc) == .inside
    }

    /// The same three ways: on the circle (distance exactly the radius) is boundary.
    static func circleLocation(_ c: Circle, _ p: LonLat, centreSinCos sc: (sin: Double, cos: Double)) -> PointLocation {
        let dLat = p.lat - c.center.lat, dLon = Geodesy.wrapDegrees(p.lon - c.center.lon)
        if abs(dLat) < 1, abs(dLon) < 1, abs(c.center.lat) < 85 {
            let h = dLat / 2 * .pi / 180, h2 = h * h
            let sinH = h * (1 - h2 / 6 * (1 - h2 / 20)), cosH = 1 - h2 / 2 * (1 - h2 / 12)
            let m = WGS84.metresPerDegree(sinLat: sc.sin * cosH + sc.cos * sinH, cosLat: sc.cos * cosH - sc.sin * sinH)
            let x = dLon * m.lon, y = dLat * m.lat
            let d = (x * x + y * y).squareRoot()
            let slack = 0.005 * d + 0.5
            if d < c.radiusM - slack { return .inside }
            if d > c.radiusM + slack { return .outside }
        }
        let d = Geodesy.distance(c.center, p)
        return d < c.radiusM ? .inside : (d == c.radiusM ? .boundary : .outside)
    }

    // MARK: Probability support

    /// Visits each ring's edges as segments in the affine metric frame at the
    /// fix (metres; origin at the fix). Cut edges are kept: they close rings.
    ///
    /// Longitudes are unwrapped along the ring: the first vertex is put
    /// within 180° of the fix and each edge then adds its own longitude
    /// difference, so the ring stays closed and its edges stay the lon/lat
    /// straight lines they are (an edge is never folded on its own). A ring
    /// wider than 180° or lying across ±180 from the fix may then sit a turn
    /// (360°) away from the fix; `turn` is the frame's x for 360°, so the
    /// caller can add the copies that reach the fix.
    func forEachRingInFrame(at p: LonLat, _ body: (_ isExterior: Bool, _ segments: [(Double, Double, Double, Double)], _ turn: Double) -> Void) {
        let k = WGS84.metresPerDegree(atLat: p.lat)
        for r in 0..<(ringStarts.count - 1) {
            var segs: [(Double, Double, Double, Double)] = []
            let first = ringStarts[r], end = ringStarts[r + 1]
            guard first < end else { continue }
            segs.reserveCapacity(end - first)
            var ax = Geodesy.wrapDegrees(edges[4 * first] - p.lon)
            for i in first..<end {
                let bx = ax + (edges[4 * i + 2] - edges[4 * i])
                segs.append((ax * k.lon, (edges[4 * i + 1] - p.lat) * k.lat, bx * k.lon, (edges[4 * i + 3] - p.lat) * k.lat))
                ax = bx
            }
            body(ringIsExterior[r], segs, 360 * k.lon)
        }
    }
}

extension PreparedShape {
    /// Visits each ring's edges as they are stored (lon1, lat1, lon2, lat2, in degrees).
    func forEachRing(_ body: (_ isExterior: Bool, _ edges: UnsafeBufferPointer<Double>) -> Void) {
        for r in 0..<(ringStarts.count - 1) {
            let first = ringStarts[r], end = ringStarts[r + 1]
            body(ringIsExterior[r], UnsafeBufferPointer(start: edges + 4 * first, count: 4 * (end - first)))
        }
    }
}

/// floor(x) clamped to 0..<count; NaN gives 0. Never traps, whatever x is.
@inline(__always)
func clampedIndex(_ x: Double, _ count: Int) -> Int {
    guard x > 0 else { return 0 }
    return x >= Double(count - 1) ? count - 1 : Int(x)
}
