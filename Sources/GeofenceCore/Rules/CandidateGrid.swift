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
/// makes a dense centre's cells hold many times the boxes that hold a point).
/// Boxes wider than 64 cells a side go to a short list every lookup checks.
///
/// A class, not a struct: judging threads share one, and a struct of nine
/// arrays copied per lookup would retain and release each array per fix,
/// atomic writes to counts the other core writes too.
public final class CandidateGrid: Sendable {
    public let ids: [String]
    let boxes: [BoundingBox]
    let origin: LonLat
    let cell: Double
    let nx: Int, ny: Int
    let offsets: [Int32]
    let entries: [Int32]
    let wide: [Int32]
    /// Per entry, which 64ths of its cell lie wholly outside, and wholly
    /// inside, its area's shape (CandidateGrid+Interior.swift); empty until `withMasks`.
    let outsideMasks: [UInt64], insideMasks: [UInt64]

    public convenience init(_ unsorted: [(String, BoundingBox)]) {
        self.init(unsorted, order: Self.order(of: unsorted))
    }

    /// The positions of `unsorted` in area_id order (their bytes, as SQLite
    /// orders them: `utf8Precedes`): grid index g is the area at
    /// `unsorted[order[g]]`. A caller that keeps its areas in `unsorted`'s
    /// order finds each one's grid index through it, with no id looked up.
    public static func order(of unsorted: [(String, BoundingBox)]) -> [Int] {
        unsorted.indices.sorted { unsorted[$0].0.utf8Precedes(unsorted[$1].0) }
    }

    /// The grid of `unsorted`, `order` being `order(of: unsorted)`.
    public init(_ unsorted: [(String, BoundingBox)], order: [Int]) {
        // Indices in area_id order, so every cell lists its areas sorted and
        // a lookup returns them sorted without comparing a string.
        ids = order.map { unsorted[$0].0 }
        let boxes = order.map { unsorted[$0].1 }
        self.boxes = boxes
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
        let origin = LonLat(lon: extent.minLon, lat: extent.minLat), cell = size
        let nx = Int(w / size) + 1, ny = Int(h / size) + 1
        (self.origin, self.cell, self.nx, self.ny) = (origin, cell, nx, ny)
        func range(_ b: BoundingBox) -> (Int, Int, Int, Int) { Self.cellRange(b, origin: origin, cell: cell, nx: nx, ny: ny) }
        var counts = [Int32](repeating: 0, count: nx * ny + 1)
        var wide: [Int32] = []
        for (i, b) in boxes.enumerated() {
            let (x0, x1, y0, y1) = range(b)
            if Self.isWide(x0, x1, y0, y1) { wide.append(Int32(i)); continue }
            for y in y0...y1 { for x in x0...x1 { counts[y * nx + x + 1] += 1 } }
        }
        for k in 1..<counts.count { counts[k] += counts[k - 1] }
        var entries = [Int32](repeating: 0, count: Int(counts[counts.count - 1]))
        Self.forEachEntry(boxes, origin: origin, cell: cell, nx: nx, ny: ny, offsets: counts) { i, slot, _ in entries[slot] = Int32(i) }
        offsets = counts
        self.entries = entries
        self.wide = wide
        (outsideMasks, insideMasks) = ([], [])
    }

    /// `g` with masks (CandidateGrid+Interior.swift).
    init(_ g: CandidateGrid, outsideMasks: [UInt64], insideMasks: [UInt64]) {
        (ids, boxes, origin, cell, nx, ny) = (g.ids, g.boxes, g.origin, g.cell, g.nx, g.ny)
        (offsets, entries, wide) = (g.offsets, g.entries, g.wide)
        (self.outsideMasks, self.insideMasks) = (outsideMasks, insideMasks)
    }

    /// Two area ids that Swift's String takes for one (canonically
    /// equivalent: "é" as one code point and as "e" and a combining accent)
    /// while their bytes differ. SQLite's UNIQUE lets both in, but judgement
    /// keys areas by String and would merge them, so the catalog refuses to
    /// judge such a pair (`requireDistinctIds`). Both of such a
    /// pair hold a byte above 0x7F (ASCII text has one form), so only those
    /// ids are looked up, by Swift's equality.
    public var ambiguousIds: (String, String)? {
        var seen: [String: String] = [:]
        for id in ids where !id.utf8.allSatisfy({ $0 < 0x80 }) {
            if let other = seen[id], !other.hasSameUTF8(as: id) { return (other, id) }
            seen[id] = id
        }
        return nil
    }

    /// Fails for two area ids that judgement would take for one
    /// (`ambiguousIds`), naming both with their bytes.
    public static func requireDistinctIds(_ pair: (String, String)?) throws {
        guard let (a, b) = pair else { return }
        throw InputError("area_ids \(Echo.quoted(a)) (bytes \(Echo.hex(a.utf8))) and \(Echo.quoted(b)) (bytes \(Echo.hex(b.utf8))) differ only in Unicode normalization; "
                         + "judgement would take them for one area: rename one (keep area_ids in NFC, or ASCII)")
    }

    /// The index of area `id`, by binary search of the sorted ids. Ids are
    /// told apart by their bytes, as SQLite's UNIQUE does: "é" and "e\u{301}"
    /// are two areas.
    public func index(of id: String) -> Int? {
        let k = orderKey(of: id)
        return k & 1 == 1 ? k >> 1 : nil
    }

    /// Where `id` falls among the ids, as one integer that orders as the ids
    /// do: 2i + 1 for the id at index i (matched by bytes, as `index(of:)`),
    /// 2i for one that would go just before index i. A merge of a subject's
    /// stays with candidates given as indices compares these (`StayMap.orderKey(at:)`).
    public func orderKey(of id: String) -> Int {
        var lo = 0, hi = ids.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ids[mid].utf8Precedes(id) { lo = mid + 1 } else { hi = mid }
        }
        return lo < ids.count && ids[lo].hasSameUTF8(as: id) ? 2 * lo + 1 : 2 * lo
    }

    /// The cells a box covers: columns x0...x1, rows y0...y1.
    static func cellRange(_ b: BoundingBox, origin: LonLat, cell: Double, nx: Int, ny: Int) -> (Int, Int, Int, Int) {
        let x0 = max(0, min(nx - 1, Int((b.minLon - origin.lon) / cell))), x1 = max(0, min(nx - 1, Int((b.maxLon - origin.lon) / cell)))
        let y0 = max(0, min(ny - 1, Int((b.minLat - origin.lat) / cell))), y1 = max(0, min(ny - 1, Int((b.maxLat - origin.lat) / cell)))
        return (x0, x1, y0, y1)
    }

    /// Visits every entry in the order the grid lists them: area by area,
    /// each area's cells row by row. `slot` is the entry's position in
    /// `entries`, `n` the cell's position among the area's own. Building the
    /// grid and attaching masks both follow it, so they cannot disagree.
    static func forEachEntry(_ boxes: [BoundingBox], origin: LonLat, cell: Double, nx: Int, ny: Int, offsets: [Int32],
                             _ body: (_ area: Int, _ slot: Int, _ n: Int) -> Void) {
        var fill = offsets
        for (i, b) in boxes.enumerated() {
            let (x0, x1, y0, y1) = cellRange(b, origin: origin, cell: cell, nx: nx, ny: ny)
            if isWide(x0, x1, y0, y1) { continue }
            var n = 0
            for y in y0...y1 {
                for x in x0...x1 {
                    let c = y * nx + x
                    body(i, Int(fill[c]), n)
                    fill[c] += 1
                    n += 1
                }
            }
        }
    }

    /// A box this many cells a side is listed once, in `wide`, not in its cells.
    static func isWide(_ x0: Int, _ x1: Int, _ y0: Int, _ y1: Int) -> Bool { x1 - x0 >= 64 || y1 - y0 >= 64 }

    /// Ids of the areas whose box holds `p` (boundary included), sorted.
    public func candidates(at p: LonLat) -> [String] {
        var out: [String] = []
        forEachCandidate(at: p) { out.append(ids[$0]) }
        return out
    }

    /// The cell holding `p`, as a number below `cellCount`; nil outside the grid.
    public func cell(of p: LonLat) -> Int? { place(of: p)?.cell }

    /// The cell holding `p` and where in it `p` lies (fractions u, v of the
    /// cell's width and height); nil outside the grid. Every lookup by
    /// position goes through here, so all agree on a point at a cell's edge.
    @inline(__always)
    private func place(of p: LonLat) -> (cell: Int, u: Double, v: Double)? {
        let fx = (p.lon - origin.lon) / cell, fy = (p.lat - origin.lat) / cell
        guard fx >= 0, fy >= 0, fx < Double(nx), fy < Double(ny) else { return nil }
        let cx = Int(fx), cy = Int(fy)
        return (cy * nx + cx, fx - Double(cx), fy - Double(cy))
    }

    public var cellCount: Int { nx * ny }

    /// `cell(of: p)` times 64 plus `p`'s sub-cell in it (the masks' 8 × 8),
    /// nil outside the grid: fixes in this order meet the same areas and
    /// the same mask bits one after another.
    public func subcellKey(of p: LonLat) -> Int? {
        place(of: p).map { $0.cell * 64 + Self.subcell($0.u, $0.v) }
    }

    /// At most how many candidates `forEachCandidate` visits at `p`: its
    /// cell's entries and the wide boxes.
    @inline(__always)
    public func candidateBound(at p: LonLat) -> Int {
        guard let c = cell(of: p) else { return wide.count }
        return Int(offsets[c + 1] - offsets[c]) + wide.count
    }

    /// Visits the index (into `ids`) of each area whose box holds `p`, in
    /// ascending order, which is area_id order: no string is touched.
    @inline(__always)
    public func forEachCandidate(at p: LonLat, _ body: (Int) throws -> Void) rethrows {
        try forEachCandidate(at: p, skippingOutside: false) { i, _ in try body(i) }
    }

    /// The same, telling `body` whether the masks (made by `withMasks`) show
    /// the area's shape holding `p` (false: not known). With
    /// `skippingOutside`, an area the masks show not holding `p` is left
    /// out: in a dense centre the box test passes for many more areas than
    /// contain the fix, and this answers most of those from the grid, without the area.
    ///
    /// An area whose inside mask holds `p`'s sub-cell needs no box test: the
    /// sub-cell lies in the shape and in its box (`keepInside(within:)`:
    /// a hand-edited catalog's shape may reach past its box). Reading the box
    /// is a likely cache miss (boxes are in area_id order, not where they
    /// are), and in a dense centre most candidates that get that far are
    /// inside so. The arrays are read through unchecked buffers.
    @inline(__always)
    public func forEachCandidate(at p: LonLat, skippingOutside: Bool, _ body: (_ index: Int, _ knownInside: Bool) throws -> Void) rethrows {
        try outsideMasks.withUnsafeBufferPointer { outside in
            try insideMasks.withUnsafeBufferPointer { inside in
                try forEachCandidate(at: p, skippingOutside: skippingOutside, outside: outside, inside: inside, body)
            }
        }
    }

    /// Whether the grid carries masks of its own (`withMasks`).
    public var hasMasks: Bool { !outsideMasks.isEmpty }

    /// The same, with the masks in `outsideMasks` and `insideMasks` (one per
    /// entry; empty: none): the grid's own, or those a session fills as it
    /// meets areas (`MasksAsMet`).
    @inline(__always)
    func forEachCandidate(at p: LonLat, skippingOutside: Bool, outside outsideMasks: UnsafeBufferPointer<UInt64>,
                          inside insideMasks: UnsafeBufferPointer<UInt64>, _ body: (_ index: Int, _ knownInside: Bool) throws -> Void) rethrows {
        var range = 0..<0
        var bit: UInt64 = 0
        if let at = place(of: p) {
            range = Int(offsets[at.cell])..<Int(offsets[at.cell + 1])
            bit = 1 << UInt64(Self.subcell(at.u, at.v))
        }
        let masked = !outsideMasks.isEmpty
        let skipping = skippingOutside && masked
        try entries.withUnsafeBufferPointer { entries in
            try boxes.withUnsafeBufferPointer { boxes in
                func holds(_ i: Int32) -> Bool {
                    let b = boxes[Int(i)]
                    return p.lon >= b.minLon && p.lon <= b.maxLon && p.lat >= b.minLat && p.lat <= b.maxLat
                }
                // Merge the cell's list and the wide list, both ascending indices.
                var k = range.lowerBound, w = 0
                while k < range.upperBound || w < wide.count {
                    if w == wide.count || (k < range.upperBound && entries[k] < wide[w]) {
                        let i = entries[k]
                        k += 1
                        if skipping && outsideMasks[k - 1] & bit != 0 { continue }
                        let inside = masked && insideMasks[k - 1] & bit != 0
                        if inside || holds(i) { try body(Int(i), inside) }
                    } else {
                        let i = wide[w]
                        w += 1
                        if holds(i) { try body(Int(i), false) }
                    }
                }
            }
        }
    }
}
