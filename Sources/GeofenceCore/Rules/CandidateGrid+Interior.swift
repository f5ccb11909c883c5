/// Which parts of each grid cell lie wholly outside (or inside) each area's
/// shape, so that most candidates of a fix are answered without a
/// containment test, and most without touching the area at all.
///
/// Why: a fix's cell lists every area whose box meets the cell. In a dense
/// city the box test passes for many more areas than contain the fix, and
/// each would cost a containment test on a shape that lives elsewhere in
/// memory. Here every (cell, area) entry gets two 64-bit
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

    /// ⌊x⌋ for a sub-cell index that is then clamped to 0 or more: any
    /// negative x gives -1, which clamps (or empties a range) as ⌊x⌋ would,
    /// without a call to `floor` per edge and row.
    @inline(__always)
    static func floorIndex(_ x: Double) -> Int { x < 0 ? -1 : Int(x) }

    /// The sub-cell (0..<64) of a point at fractions (u, v) of its cell.
    @inline(__always)
    static func subcell(_ u: Double, _ v: Double) -> Int {
        let sx = min(side - 1, max(0, Int(u * Double(side)))), sy = min(side - 1, max(0, Int(v * Double(side))))
        return sy * side + sx
    }

    /// The masks of area `i`'s entries, cell by cell (rows, then columns, as
    /// the grid lists them); empty for an area listed as wide. Four steps:
    /// the sub-cells of the area's cells (`Subcells`), each classified
    /// outside / inside (`classifyCircle`, or `markEdges` then
    /// `classifyRegions` for polygons), then packed into a mask per cell.
    public func masks(ofArea i: Int, _ shape: PreparedShape) -> (outside: [UInt64], inside: [UInt64]) {
        let (x0, x1, y0, y1) = Self.cellRange(boxes[i], origin: origin, cell: cell, nx: nx, ny: ny)
        if Self.isWide(x0, x1, y0, y1) { return ([], []) }
        let f = Subcells(x0: x0, x1: x1, y0: y0, y1: y1, origin: origin, cell: cell)
        // Three planes of w × h flags in one block, read and written without
        // bounds checks (this loop is most of masking a catalog); every index
        // below is a row under h times w plus a column under w.
        let planes = UnsafeMutableBufferPointer<Bool>.allocate(capacity: 3 * f.count)
        planes.initialize(repeating: false)
        defer { planes.deallocate() }
        let outside = UnsafeMutableBufferPointer(rebasing: planes[0..<f.count])
        let inside = UnsafeMutableBufferPointer(rebasing: planes[f.count..<(2 * f.count)])
        if let c = shape.circle {
            guard Self.classifyCircle(c, f, outside: outside, inside: inside) else {
                let none = [UInt64](repeating: 0, count: (x1 - x0 + 1) * (y1 - y0 + 1))
                return (none, none)
            }
        } else {
            let touched = UnsafeMutableBufferPointer(rebasing: planes[(2 * f.count)...])
            Self.markEdges(of: shape, f, touched: touched)
            Self.classifyRegions(of: shape, f, touched: touched, outside: outside, inside: inside)
        }
        Self.keepInside(within: boxes[i], f, inside: inside)
        return Self.pack(f, outside: outside, inside: inside)
    }

    /// Clears the inside flag of every sub-cell not wholly within the area's
    /// index box (widened by 1e-9°, as edges are met). An inside bit also
    /// stands for the box test the walk then skips, and a catalog may hold a
    /// shape that reaches past its box (a circle's radius or an R*Tree row
    /// edited by hand): a point there is no candidate without masks, so none
    /// with them either. A shape within its box (every catalog the engine
    /// writes) loses no bit: an inside sub-cell touches no edge.
    static func keepInside(within b: BoundingBox, _ f: Subcells, inside: UnsafeMutableBufferPointer<Bool>) {
        let eps = 1e-9
        let columns = (0..<f.w).map { f.west + Double($0) * f.sub - eps >= b.minLon && f.west + Double($0 + 1) * f.sub + eps <= b.maxLon }
        for row in 0..<f.h {
            let y0 = f.south + Double(row) * f.sub - eps, y1 = f.south + Double(row + 1) * f.sub + eps
            let rowWithin = y0 >= b.minLat && y1 <= b.maxLat
            for col in 0..<f.w where !(rowWithin && columns[col]) { inside[row * f.w + col] = false }
        }
    }

    /// The sub-cells of a range of cells: `w` × `h` of them, `sub` degrees a
    /// side, the first at (`west`, `south`).
    struct Subcells {
        let w: Int, h: Int, sub: Double, west: Double, south: Double
        var count: Int { w * h }

        init(x0: Int, x1: Int, y0: Int, y1: Int, origin: LonLat, cell: Double) {
            w = CandidateGrid.side * (x1 - x0 + 1)
            h = CandidateGrid.side * (y1 - y0 + 1)
            sub = cell / Double(CandidateGrid.side)
            west = origin.lon + Double(x0) * cell
            south = origin.lat + Double(y0) * cell
        }

        /// The sub-cell (col, row): [west + col·sub, west + (col+1)·sub] × [south + row·sub, …].
        func rect(_ col: Int, _ row: Int) -> BoundingBox {
            BoundingBox(minLon: west + Double(col) * sub, minLat: south + Double(row) * sub,
                        maxLon: west + Double(col + 1) * sub, maxLat: south + Double(row + 1) * sub)
        }
    }

    /// A circle's sub-cells, by their nearest and farthest points from the
    /// centre in the flat frame at the centre's latitude, with 2 % + 2 m of
    /// slack. False (nothing classified) where that frame is not within ~1 %
    /// of the ellipsoid: past 70° latitude, near ±180°, or a radius over 20 km.
    static func classifyCircle(_ c: Circle, _ f: Subcells, outside: UnsafeMutableBufferPointer<Bool>,
                               inside: UnsafeMutableBufferPointer<Bool>) -> Bool {
        guard abs(c.center.lat) < 70, abs(c.center.lon) < 179, c.radiusM < 20_000 else { return false }
        let k = WGS84.metresPerDegree(atLat: c.center.lat)
        // A sub-cell's nearest and farthest offsets from the centre, east
        // and north, depend on its column and row alone: worked out once
        // per column and per row, not per sub-cell.
        let near = { (lo: Double, hi: Double, centre: Double) in max(lo, min(centre, hi)) - centre }
        let far = { (lo: Double, hi: Double, centre: Double) in max(abs(lo - centre), abs(hi - centre)) }
        let columns = (0..<f.w).map { col in
            let r = f.rect(col, 0)
            return (near: near(r.minLon, r.maxLon, c.center.lon) * k.lon, far: far(r.minLon, r.maxLon, c.center.lon) * k.lon)
        }
        // Squared distances against squared radii: the slack dwarfs any
        // rounding that a square root would have saved.
        let slack = 0.02 * c.radiusM + 2
        let outer = (c.radiusM + slack) * (c.radiusM + slack)
        let inner = c.radiusM > slack ? (c.radiusM - slack) * (c.radiusM - slack) : -1
        for row in 0..<f.h {
            let r = f.rect(0, row)
            let dy = near(r.minLat, r.maxLat, c.center.lat) * k.lat, fy = far(r.minLat, r.maxLat, c.center.lat) * k.lat
            for col in 0..<f.w {
                let (dx, fx) = columns[col]
                outside[row * f.w + col] = dx * dx + dy * dy > outer
                inside[row * f.w + col] = fx * fx + fy * fy < inner
            }
        }
        return true
    }

    /// Marks every sub-cell a polygon's edge meets (tested against the
    /// sub-cell widened by 1e-9°, so rounding cannot hide a touch).
    static func markEdges(of shape: PreparedShape, _ f: Subcells, touched: UnsafeMutableBufferPointer<Bool>) {
        let eps = 1e-9
        let (w, h, sub, west, south) = (f.w, f.h, f.sub, f.west, f.south)
        for e in 0..<shape.edgeCount {
            let edge = shape.edge(e)
            let a = LonLat(lon: edge.lon1, lat: edge.lat1), b = LonLat(lon: edge.lon2, lat: edge.lat2)
            let c0 = max(0, floorIndex((min(a.lon, b.lon) - eps - west) / sub))
            let c1 = min(w - 1, floorIndex((max(a.lon, b.lon) + eps - west) / sub))
            let r0 = max(0, floorIndex((min(a.lat, b.lat) - eps - south) / sub))
            let r1 = min(h - 1, floorIndex((max(a.lat, b.lat) + eps - south) / sub))
            guard c0 <= c1, r0 <= r1 else { continue }
            // Row by row: the part of the edge within the row's band
            // (widened by eps) spans an interval of longitudes, and the
            // sub-cells that interval meets (widened by eps) are the ones
            // the edge meets: O(rows) per edge, not a clipping test for
            // every sub-cell of its box.
            let dx = b.lon - a.lon, dy = b.lat - a.lat
            for row in r0...r1 {
                let y0 = south + Double(row) * sub - eps, y1 = south + Double(row + 1) * sub + eps
                var t0 = 0.0, t1 = 1.0
                if dy == 0 {
                    guard a.lat >= y0 && a.lat <= y1 else { continue }
                } else {
                    let ta = (y0 - a.lat) / dy, tb = (y1 - a.lat) / dy
                    t0 = max(0, min(ta, tb)); t1 = min(1, max(ta, tb))
                    guard t0 <= t1 else { continue }
                }
                let xa = a.lon + dx * t0, xb = a.lon + dx * t1
                let from = max(c0, floorIndex((min(xa, xb) - eps - west) / sub))
                let to = min(c1, floorIndex((max(xa, xb) + eps - west) / sub))
                guard from <= to else { continue }
                for col in from...to { touched[row * w + col] = true }
            }
        }
    }

    /// The untouched sub-cells of a polygon, each wholly outside or inside.
    /// A run of untouched sub-cells in a row shares one answer, and so does
    /// an untouched sub-cell below it: one containment test per region the
    /// edges leave, not per sub-cell.
    static func classifyRegions(of shape: PreparedShape, _ f: Subcells, touched: UnsafeMutableBufferPointer<Bool>,
                                outside: UnsafeMutableBufferPointer<Bool>, inside: UnsafeMutableBufferPointer<Bool>) {
        let w = f.w
        for row in 0..<f.h {
            var col = 0
            while col < w {
                if touched[row * w + col] { col += 1; continue }
                var end = col
                while end < w && !touched[row * w + end] { end += 1 }
                var answer: Bool? = nil
                if row > 0 {
                    for c in col..<end where !touched[(row - 1) * w + c] { answer = outside[(row - 1) * w + c]; break }
                }
                let r = f.rect(col, row)
                let out = answer ?? !shape.contains(LonLat(lon: (r.minLon + r.maxLon) / 2, lat: (r.minLat + r.maxLat) / 2))
                for c in col..<end { outside[row * w + c] = out; inside[row * w + c] = !out }
                col = end
            }
        }
    }

    /// The flags packed into one outside and one inside mask per cell, cells
    /// by rows then columns, a mask's bits by sub-cell rows then columns.
    static func pack(_ f: Subcells, outside: UnsafeMutableBufferPointer<Bool>,
                     inside: UnsafeMutableBufferPointer<Bool>) -> (outside: [UInt64], inside: [UInt64]) {
        let n = side, w = f.w
        let cellsX = f.w / n, cellsY = f.h / n
        var outMasks: [UInt64] = [], inMasks: [UInt64] = []
        outMasks.reserveCapacity(cellsX * cellsY)
        inMasks.reserveCapacity(cellsX * cellsY)
        // A sub-cell row's eight flags (bytes of 0 or 1) become a byte of
        // bits at once: times this constant, flag k lands on bit 56 + k, and
        // no two partial products meet or carry into those bits.
        assert(n == 8, "a row of a cell is eight flags: one 64-bit load")
        let gather: UInt64 = 0x0102_0408_1020_4080
        func bits(_ plane: UnsafeMutableBufferPointer<Bool>, _ at: Int) -> UInt64 {
            (UnsafeRawPointer(plane.baseAddress! + at).loadUnaligned(as: UInt64.self) &* gather) >> 56
        }
        for cy in 0..<cellsY {
            for cx in 0..<cellsX {
                var o: UInt64 = 0, i: UInt64 = 0
                for sy in 0..<n {
                    let row = (n * cy + sy) * w + n * cx
                    o |= bits(outside, row) << UInt64(sy * n)
                    i |= bits(inside, row) << UInt64(sy * n)
                }
                outMasks.append(o)
                inMasks.append(i)
            }
        }
        return (outMasks, inMasks)
    }

    /// How many (cell, area) entries the grid lists: the size of its mask arrays.
    public var entryCount: Int { entries.count }

    /// Writes area `i`'s masks (`masks(ofArea:)`) to its entries' places in
    /// `outside` and `inside`, arrays of `entryCount`: threads that mask
    /// different areas write different places, so the areas of a catalog
    /// are masked on every core with no pass afterwards to gather them.
    public func writeMasks(ofArea i: Int, _ shape: PreparedShape, outside: UnsafeMutableBufferPointer<UInt64>,
                           inside: UnsafeMutableBufferPointer<UInt64>) {
        let (o, n) = masks(ofArea: i, shape)
        guard !o.isEmpty else { return }
        let (x0, x1, y0, y1) = Self.cellRange(boxes[i], origin: origin, cell: cell, nx: nx, ny: ny)
        var k = 0
        for y in y0...y1 {
            for x in x0...x1 {
                // A cell lists its areas in ascending index: find this one's place.
                let c = y * nx + x
                var lo = Int(offsets[c]), hi = Int(offsets[c + 1])
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if Int(entries[mid]) < i { lo = mid + 1 } else { hi = mid }
                }
                outside[lo] = o[k]
                inside[lo] = n[k]
                k += 1
            }
        }
    }

    /// This grid with the masks `writeMasks` wrote (entries left zero are
    /// visited and tested).
    public func withMasks(outside: [UInt64], inside: [UInt64]) -> CandidateGrid {
        precondition(outside.count == entries.count && inside.count == entries.count, "one mask per entry")
        return CandidateGrid(self, outsideMasks: outside, insideMasks: inside)
    }
}
