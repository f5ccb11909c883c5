/// Which parts of each grid cell lie wholly outside (or inside) each area's
/// shape, so that most candidates of a fix are answered without a
/// containment test, and most without touching the area at all.
///
/// Why: a fix's cell lists every area whose box meets the cell. On the
/// medium benchmark's 1M fixes the box test passes for ~44 areas per fix
/// while ~17 contain it, and each of the ~44 cost a containment test on a
/// shape that lives elsewhere in memory. Here every (cell, area) entry gets two 64-bit
/// masks, one bit for each of the cell's 8 × 8 sub-cells: `outside` set when
/// no point of the sub-cell is inside the shape (a fix there skips the area),
/// `inside` when every point is (the verdict needs no containment test: what
/// a subject staying inside meets at every fix).
///
/// How a sub-cell is classified, conservatively (a bit left clear only costs
/// a containment test):
/// - polygons: a sub-cell that any edge meets (tested against the sub-cell
///   widened by 1e-9°, so rounding cannot hide a touch) stays clear. The
///   others contain no boundary point, so all of their points answer
///   `contains` as their centre does; and untouched neighbours (side by side
///   or one above the other) answer alike, since a boundary between them
///   would touch both, so one containment test serves a whole region.
/// - circles: the planar distance from the centre to the sub-cell's nearest
///   and farthest points, with 2 % + 2 m of slack for the flat frame (radius up to 20 km,
///   latitude up to 70°, away from the antimeridian); others stay clear.
extension CandidateGrid {
    /// Sub-cells per cell side.
    static let side = 8

    /// The sub-cell (0..<64) of a point at fractions (u, v) of its cell.
    @inline(__always)
    static func subcell(_ u: Double, _ v: Double) -> Int {
        let sx = min(side - 1, max(0, Int(u * Double(side)))), sy = min(side - 1, max(0, Int(v * Double(side))))
        return sy * side + sx
    }

    /// The masks of area `i`'s entries, cell by cell (rows, then columns, as
    /// the grid lists them); empty for an area listed as wide.
    public func masks(ofArea i: Int, _ shape: PreparedShape) -> (outside: [UInt64], inside: [UInt64]) {
        let (x0, x1, y0, y1) = Self.cellRange(boxes[i], origin: origin, cell: cell, nx: nx, ny: ny)
        if Self.isWide(x0, x1, y0, y1) { return ([], []) }
        let n = Self.side
        let w = n * (x1 - x0 + 1), h = n * (y1 - y0 + 1)
        let sub = cell / Double(n)
        let west = origin.lon + Double(x0) * cell, south = origin.lat + Double(y0) * cell
        // The sub-cell (col, row) spans [west + col·sub, west + (col+1)·sub] × [south + row·sub, …].
        func rect(_ col: Int, _ row: Int) -> BoundingBox {
            BoundingBox(minLon: west + Double(col) * sub, minLat: south + Double(row) * sub,
                        maxLon: west + Double(col + 1) * sub, maxLat: south + Double(row + 1) * sub)
        }
        var outside = [Bool](repeating: false, count: w * h), inside = outside
        if let c = shape.circle {
            // The flat frame at the centre's latitude is within ~1 % of the
            // ellipsoid over the circle's box up to 20 km and 70°.
            guard abs(c.center.lat) < 70, abs(c.center.lon) < 179, c.radiusM < 20_000 else {
                let none = [UInt64](repeating: 0, count: (x1 - x0 + 1) * (y1 - y0 + 1))
                return (none, none)
            }
            let k = WGS84.metresPerDegree(atLat: c.center.lat)
            for row in 0..<h {
                for col in 0..<w {
                    let r = rect(col, row)
                    let nx = max(r.minLon, min(c.center.lon, r.maxLon)), ny = max(r.minLat, min(c.center.lat, r.maxLat))
                    let dx = (nx - c.center.lon) * k.lon, dy = (ny - c.center.lat) * k.lat
                    let near = (dx * dx + dy * dy).squareRoot()
                    let fx = max(abs(r.minLon - c.center.lon), abs(r.maxLon - c.center.lon)) * k.lon
                    let fy = max(abs(r.minLat - c.center.lat), abs(r.maxLat - c.center.lat)) * k.lat
                    let far = (fx * fx + fy * fy).squareRoot()
                    let slack = 0.02 * c.radiusM + 2
                    outside[row * w + col] = near > c.radiusM + slack
                    inside[row * w + col] = far < c.radiusM - slack
                }
            }
        } else {
            let eps = 1e-9
            var touched = [Bool](repeating: false, count: w * h)
            for e in 0..<shape.edgeCount {
                let edge = shape.edge(e)
                let a = LonLat(lon: edge.lon1, lat: edge.lat1), b = LonLat(lon: edge.lon2, lat: edge.lat2)
                let c0 = max(0, Int(((min(a.lon, b.lon) - eps - west) / sub).rounded(.down)))
                let c1 = min(w - 1, Int(((max(a.lon, b.lon) + eps - west) / sub).rounded(.down)))
                let r0 = max(0, Int(((min(a.lat, b.lat) - eps - south) / sub).rounded(.down)))
                let r1 = min(h - 1, Int(((max(a.lat, b.lat) + eps - south) / sub).rounded(.down)))
                guard c0 <= c1, r0 <= r1 else { continue }
                for row in r0...r1 {
                    for col in c0...c1 where !touched[row * w + col] {
                        if Self.segment(a, b, meets: rect(col, row), widenedBy: eps) { touched[row * w + col] = true }
                    }
                }
            }
            // A run of untouched sub-cells in a row shares one answer, and so
            // does an untouched sub-cell below it: one containment test per
            // region the edges leave, not per sub-cell.
            for row in 0..<h {
                var col = 0
                while col < w {
                    if touched[row * w + col] { col += 1; continue }
                    var end = col
                    while end < w && !touched[row * w + end] { end += 1 }
                    var answer: Bool? = nil
                    if row > 0 {
                        for c in col..<end where !touched[(row - 1) * w + c] { answer = outside[(row - 1) * w + c]; break }
                    }
                    let r = rect(col, row)
                    let out = answer ?? !shape.contains(LonLat(lon: (r.minLon + r.maxLon) / 2, lat: (r.minLat + r.maxLat) / 2))
                    for c in col..<end { outside[row * w + c] = out; inside[row * w + c] = !out }
                    col = end
                }
            }
        }
        var outMasks: [UInt64] = [], inMasks: [UInt64] = []
        outMasks.reserveCapacity((x1 - x0 + 1) * (y1 - y0 + 1))
        inMasks.reserveCapacity((x1 - x0 + 1) * (y1 - y0 + 1))
        for cy in 0...(y1 - y0) {
            for cx in 0...(x1 - x0) {
                var o: UInt64 = 0, i: UInt64 = 0
                for sy in 0..<n {
                    for sx in 0..<n {
                        let k = (n * cy + sy) * w + n * cx + sx, bit: UInt64 = 1 << UInt64(sy * n + sx)
                        if outside[k] { o |= bit }
                        if inside[k] { i |= bit }
                    }
                }
                outMasks.append(o)
                inMasks.append(i)
            }
        }
        return (outMasks, inMasks)
    }

    /// This grid with the masks of each area (`masks(ofArea:)`, by area
    /// index; nil leaves an area's entries clear: visited and tested).
    public func withMasks(_ perArea: [(outside: [UInt64], inside: [UInt64])?]) -> CandidateGrid {
        var outside = [UInt64](repeating: 0, count: entries.count), inside = outside
        Self.forEachEntry(boxes, origin: origin, cell: cell, nx: nx, ny: ny, offsets: offsets) { i, slot, n in
            guard i < perArea.count, let mine = perArea[i], n < mine.outside.count else { return }
            outside[slot] = mine.outside[n]
            inside[slot] = mine.inside[n]
        }
        return CandidateGrid(self, outsideMasks: outside, insideMasks: inside)
    }

    /// Whether segment a–b meets the closed box widened by `eps` (Liang–Barsky clipping).
    static func segment(_ a: LonLat, _ b: LonLat, meets r: BoundingBox, widenedBy eps: Double) -> Bool {
        let minX = r.minLon - eps, maxX = r.maxLon + eps, minY = r.minLat - eps, maxY = r.maxLat + eps
        let dx = b.lon - a.lon, dy = b.lat - a.lat
        var t0 = 0.0, t1 = 1.0
        // Keeps the part of the segment on the inner side of one edge of the box; false if none is left.
        func clip(_ p: Double, _ q: Double) -> Bool {
            if p == 0 { return q >= 0 }
            let t = q / p
            if p < 0 { if t > t1 { return false }; t0 = max(t0, t) } else { if t < t0 { return false }; t1 = min(t1, t) }
            return true
        }
        return clip(-dx, a.lon - minX) && clip(dx, maxX - a.lon) && clip(-dy, a.lat - minY) && clip(dy, maxY - a.lat) && t0 <= t1
    }
}
