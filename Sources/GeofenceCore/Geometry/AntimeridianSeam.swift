/// The cut of a shape split at the antimeridian: which stretches of its
/// edges along +180 and −180 are one seam seen from both sides, and so not
/// boundary (RFC 7946 §3.1.9 stores a shape across ±180 as parts that meet
/// there).
///
/// Rule: a stretch of an edge along +180 is a cut where edges of the same
/// shape along −180 cover the same latitudes, and the other way round; what
/// has no partner across (a shape whose cut edges do not match, or one that
/// touches only one side) stays real boundary. Partners are matched exactly,
/// latitude for latitude: an edge partly matched is split at its partner's
/// ends (points on the meridian, so the ring's shape does not change), its
/// matched pieces cut and the rest boundary. (Natural Earth's Russia has
/// seam ends that differ by ~1e-13° across; those slivers stay boundary, and
/// lie between coast vertices that are boundary anyway.)
struct AntimeridianSeam {
    /// A closed latitude interval (not a ClosedRange, whose init traps on NaN).
    struct Span { var lo, hi: Double }

    /// Latitude intervals covered by edges along +180 and along −180, merged, ascending.
    let east: [Span]
    let west: [Span]

    init(_ polygons: [Polygon]) {
        var east: [Span] = [], west: [Span] = []
        for poly in polygons {
            for ring in poly.rings {
                let pts = ring.points
                guard pts.count >= 2 else { continue }
                for i in 0..<(pts.count - 1) {
                    let a = pts[i], b = pts[i + 1]
                    guard Self.isAlongAntimeridian(a, b) else { continue }
                    let span = Span(lo: min(a.lat, b.lat), hi: max(a.lat, b.lat))
                    if a.lon == 180 { east.append(span) } else { west.append(span) }
                }
            }
        }
        self.east = Self.merged(east)
        self.west = Self.merged(west)
    }

    /// Whether any stretch can be a cut: edges along both +180 and −180.
    var hasCut: Bool { !east.isEmpty && !west.isEmpty }

    @inline(__always)
    static func isAlongAntimeridian(_ a: LonLat, _ b: LonLat) -> Bool { a.lon == b.lon && abs(a.lon) == 180 }

    /// The edge a→b along ±180 in pieces, in its direction, each with whether
    /// it is a cut (its latitudes covered across the meridian).
    func pieces(_ a: LonLat, _ b: LonLat) -> [(a: LonLat, b: LonLat, cut: Bool)] {
        let across = a.lon == 180 ? west : east
        let lo = min(a.lat, b.lat), hi = max(a.lat, b.lat)
        var stops = [lo]
        for r in across {
            if r.lo > lo && r.lo < hi { stops.append(r.lo) }
            if r.hi > lo && r.hi < hi { stops.append(r.hi) }
        }
        stops.append(hi)
        stops.sort()
        var out: [(a: LonLat, b: LonLat, cut: Bool)] = []
        for k in 0..<(stops.count - 1) {
            let mid = stops[k] / 2 + stops[k + 1] / 2
            let cut = across.contains { $0.lo <= mid && mid <= $0.hi }
            out.append((LonLat(lon: a.lon, lat: stops[k]), LonLat(lon: a.lon, lat: stops[k + 1]), cut))
        }
        if out.isEmpty { out.append((a, b, across.contains { $0.lo <= lo && lo <= $0.hi })) }
        // Runs of the same kind join up: fewer edges, same meridian.
        var joined: [(a: LonLat, b: LonLat, cut: Bool)] = []
        for piece in out {
            if let last = joined.last, last.cut == piece.cut { joined[joined.count - 1].b = piece.b } else { joined.append(piece) }
        }
        if a.lat > b.lat { joined = joined.reversed().map { ($0.b, $0.a, $0.cut) } }
        joined[0].a = a
        joined[joined.count - 1].b = b
        return joined
    }

    static func merged(_ spans: [Span]) -> [Span] {
        var out: [Span] = []
        for s in spans.sorted(by: { $0.lo < $1.lo }) {
            if let last = out.last, s.lo <= last.hi {
                out[out.count - 1].hi = max(last.hi, s.hi)
            } else {
                out.append(s)
            }
        }
        return out
    }
}
