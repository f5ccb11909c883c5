/// An in-memory index of area boxes on a uniform lon/lat grid: which areas'
/// boxes hold a point, with no query per point. Built once for a large batch
/// (or by a task over its read-only copy of the catalog), it replaces one
/// R*Tree query per fix with a cell lookup and a few box tests.
///
/// Layout: compressed rows (one offsets array, one entries array), so a
/// million areas cost a few tens of MB and no per-cell allocation. A cell is
/// about as wide as the median box: a lookup then scans little more than the
/// boxes that actually hold the point, even where a city centre packs
/// hundreds of areas into a kilometre (sizing by average density instead
/// scanned 290 boxes per fix for 44 holding it on the benchmark catalog).
/// Boxes wider than 64 cells a side go to a short list every lookup checks.
public struct CandidateGrid: Sendable {
    public let ids: [String]
    private let boxes: [BoundingBox]
    private let origin: LonLat
    private let cell: Double
    private let nx: Int, ny: Int
    private let offsets: [Int32]
    private let entries: [Int32]
    private let wide: [Int32]

    public init(_ unsorted: [(String, BoundingBox)]) {
        // Indices in area_id order, so every cell lists its areas sorted and a
        // lookup returns them sorted without comparing a string.
        let items = unsorted.sorted { $0.0 < $1.0 }
        ids = items.map(\.0)
        boxes = items.map(\.1)
        var extent = BoundingBox.empty
        for b in boxes { extent.add(LonLat(lon: b.minLon, lat: b.minLat)); extent.add(LonLat(lon: b.maxLon, lat: b.maxLat)) }
        if boxes.isEmpty { extent = BoundingBox(minLon: 0, minLat: 0, maxLon: 1, maxLat: 1) }
        let w = max(extent.maxLon - extent.minLon, 1e-6), h = max(extent.maxLat - extent.minLat, 1e-6)
        // The median box's larger side, no finer than ~10 m; then coarser
        // until there are at most 4M cells and 16 entries per box.
        var sides = boxes.map { max($0.maxLon - $0.minLon, $0.maxLat - $0.minLat) }
        var size = 1e-4
        if !sides.isEmpty {
            sides.sort()
            size = max(size, sides[sides.count / 2])
        }
        let budget = 16.0 * Double(max(boxes.count, 1))
        func entries(_ size: Double, _ boxes: [BoundingBox]) -> Double {
            var n = 0.0
            for b in boxes {
                let cx = ((b.maxLon - b.minLon) / size).rounded(.down) + 2, cy = ((b.maxLat - b.minLat) / size).rounded(.down) + 2
                n += (cx >= 65 || cy >= 65) ? 0 : cx * cy
            }
            return n
        }
        while (w / size + 1) * (h / size + 1) > 4_000_000 || entries(size, boxes) > budget { size *= 1.5 }
        origin = LonLat(lon: extent.minLon, lat: extent.minLat)
        cell = size
        nx = Int(w / size) + 1
        ny = Int(h / size) + 1
        let (nx, ny, origin, cell) = (self.nx, self.ny, self.origin, self.cell)
        func range(_ b: BoundingBox) -> (Int, Int, Int, Int) {
            let x0 = max(0, min(nx - 1, Int((b.minLon - origin.lon) / cell))), x1 = max(0, min(nx - 1, Int((b.maxLon - origin.lon) / cell)))
            let y0 = max(0, min(ny - 1, Int((b.minLat - origin.lat) / cell))), y1 = max(0, min(ny - 1, Int((b.maxLat - origin.lat) / cell)))
            return (x0, x1, y0, y1)
        }
        var counts = [Int32](repeating: 0, count: nx * ny + 1)
        var wide: [Int32] = []
        for (i, b) in boxes.enumerated() {
            let (x0, x1, y0, y1) = range(b)
            if x1 - x0 >= 64 || y1 - y0 >= 64 { wide.append(Int32(i)); continue }
            for y in y0...y1 { for x in x0...x1 { counts[y * nx + x + 1] += 1 } }
        }
        for k in 1..<counts.count { counts[k] += counts[k - 1] }
        var fill = counts
        var entries = [Int32](repeating: 0, count: Int(counts[counts.count - 1]))
        let wideSet = Set(wide)
        for (i, b) in boxes.enumerated() where !wideSet.contains(Int32(i)) {
            let (x0, x1, y0, y1) = range(b)
            for y in y0...y1 {
                for x in x0...x1 {
                    let c = y * nx + x
                    entries[Int(fill[c])] = Int32(i)
                    fill[c] += 1
                }
            }
        }
        offsets = counts
        self.entries = entries
        self.wide = wide
    }

    /// Ids of the areas whose box holds `p` (boundary included), sorted.
    public func candidates(at p: LonLat) -> [String] {
        var out: [String] = []
        forEachCandidate(at: p) { out.append(ids[$0]) }
        return out
    }

    /// Visits the index (into `ids`) of each area whose box holds `p`, in
    /// ascending order, which is area_id order: no string is touched.
    @inline(__always)
    public func forEachCandidate(at p: LonLat, _ body: (Int) throws -> Void) rethrows {
        func holds(_ i: Int32) -> Bool {
            let b = boxes[Int(i)]
            return p.lon >= b.minLon && p.lon <= b.maxLon && p.lat >= b.minLat && p.lat <= b.maxLat
        }
        let fx = (p.lon - origin.lon) / cell, fy = (p.lat - origin.lat) / cell
        var range = 0..<0
        if fx >= 0, fy >= 0, fx < Double(nx), fy < Double(ny) {
            let c = Int(fy) * nx + Int(fx)
            range = Int(offsets[c])..<Int(offsets[c + 1])
        }
        // Merge the cell's list and the wide list, both ascending indices.
        var k = range.lowerBound, w = 0
        while k < range.upperBound || w < wide.count {
            let i: Int32
            if w == wide.count || (k < range.upperBound && entries[k] < wide[w]) { i = entries[k]; k += 1 } else { i = wide[w]; w += 1 }
            if holds(i) { try body(Int(i)) }
        }
    }
}
