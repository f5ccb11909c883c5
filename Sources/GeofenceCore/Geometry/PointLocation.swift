/// Where a point lies relative to an area: in its interior, outside it, or
/// on its boundary. Containment counts the boundary as outside (GEOS's
/// `ST_Contains`), and a signed distance is exactly 0 there.
public enum PointLocation: Equatable, Sendable {
    case inside, outside, boundary
}

extension LonLat {
    /// The point with longitude +180 written as −180: the two are one
    /// meridian, and every answer must be the same for both spellings.
    @inline(__always)
    public var canonical: LonLat { lon == 180 ? LonLat(lon: -180, lat: lat) : self }
}

extension Edge {
    /// An edge along latitude ±90: in lon/lat it has a length, on the Earth
    /// it is the pole, a single point, and so not boundary. (Natural Earth's
    /// Antarctica closes along −90 from +180 to −180.)
    @inline(__always)
    var isPolar: Bool { lat1 == lat2 && abs(lat1) == 90 }
}

/// The even-odd ray test (towards +longitude) with an exact boundary: every
/// holder of polygons feeds it the edges that may meet the point's parallel,
/// and it tells inside, outside and boundary apart (`Orientation`).
///
/// Rules:
/// - A point on a boundary edge (its ends included) is on the boundary,
///   whatever the edge's direction and whichever ring it belongs to.
/// - Edges that are not boundary (`isBoundary` false: the matched cut at
///   ±180, polar edges) never make a point boundary. A point on a cut edge
///   at −180 counts as just east of it, so the cut is not a crossing and
///   the point answers as the part east of the cut does.
/// - A point at longitude +180 is located as −180 (`LonLat.canonical`), and
///   is on the boundary if either spelling is on a boundary edge.
/// - At latitude ±90 every longitude is one point, the pole: it is on the
///   boundary when a boundary edge ends there.
/// - An edge crosses the point's parallel half-open in latitude (an edge
///   counts when one end is above the point and the other is not), so a
///   vertex on the ray counts once; at latitude +90 the other way round
///   (`crossesParallel`), so a cap over either pole holds its pole.
struct PointLocator {
    let q: LonLat
    /// The point spelled +180, when it lies on the antimeridian.
    let east: LonLat?
    let atPole: Bool
    var parity = false
    var onBoundary = false

    @inline(__always)
    init(_ p: LonLat) {
        q = p.canonical
        east = abs(p.lon) == 180 ? LonLat(lon: 180, lat: p.lat) : nil
        atPole = abs(p.lat) == 90
    }

    var location: PointLocation { onBoundary ? .boundary : (parity ? .inside : .outside) }

    /// Takes one edge; an edge wholly north or south of the point is passed over.
    @inline(__always)
    mutating func visit(_ e: Edge, isBoundary: Bool) {
        let lat = q.lat
        if (e.lat1 > lat && e.lat2 > lat) || (e.lat1 < lat && e.lat2 < lat) { return }
        meet(e, isBoundary: isBoundary)
    }

    /// An edge whose latitude span holds the point's (closed).
    @inline(__always)
    private mutating func meet(_ e: Edge, isBoundary: Bool) {
        let o = Orientation.sign(e.lon1, e.lat1, e.lon2, e.lat2, q.lon, q.lat)
        if o == 0 {
            // On the edge's line and within its latitude span: on the edge,
            // once the longitude span is checked too (for edges along a parallel).
            if isBoundary && Self.withinLongitudes(e, q.lon) { onBoundary = true }
        } else if crossesParallel(e) && (o > 0) == (e.lat2 > e.lat1) {
            // Left of an edge going north, or right of one going south: the edge is east of the point.
            parity.toggle()
        }
        guard isBoundary else { return }
        if let east, e.lon1 == 180 || e.lon2 == 180, Self.withinLongitudes(e, 180),
           Orientation.sign(e.lon1, e.lat1, e.lon2, e.lat2, east.lon, east.lat) == 0 {
            onBoundary = true
        }
        if atPole && (e.lat1 == q.lat || e.lat2 == q.lat) { onBoundary = true }
    }

    /// Half-open: one end above the point's latitude and the other not, so
    /// the point counts as just above its parallel (a vertex on the ray
    /// counts once); at the North Pole, where nothing is above, as just below.
    @inline(__always)
    private func crossesParallel(_ e: Edge) -> Bool {
        if q.lat == 90 { return (e.lat1 >= 90) != (e.lat2 >= 90) }
        return (e.lat1 > q.lat) != (e.lat2 > q.lat)
    }

    @inline(__always)
    private static func withinLongitudes(_ e: Edge, _ lon: Double) -> Bool {
        lon >= min(e.lon1, e.lon2) && lon <= max(e.lon1, e.lon2)
    }
}
