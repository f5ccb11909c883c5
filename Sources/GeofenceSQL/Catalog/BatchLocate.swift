import GeofenceCore
#if canImport(Glibc)
import Glibc
#endif

/// `geofence locate --fixes FILE`: for every fix of a batch, the verdict of
/// every area whose box holds it — the question "which fences contain each
/// fix" answered without a query per fix.
///
/// How: a batch of fewer valid fixes than areas / 30 locates each fix
/// through the R*Tree (`locateThroughIndex`), with the same pairs. Otherwise
/// every area's box is read at the first chunk into a `CandidateGrid`
/// (`OnDemandAreas`); fixes are cut into chunks, each split into ranges
/// walked through the grid on every core (`locate`): a candidate already
/// prepared is judged at once, one not yet prepared is set aside, prepared
/// after the walk and judged then. The pairs come back in fix order, then
/// area_id order. Verdicts are those of gf_area_contains: the
/// area's accuracy limits and confidence, or `confidence` for every area.
/// Outside verdicts are not reported; undecided ones are.
public enum BatchLocate {
    public struct Report {
        public var fixes = 0, invalid = 0, pairs = 0
        /// Wall time reading and preparing the catalog, and locating the fixes
        /// against it (not reading fixes or writing pairs): the part a peer
        /// with its data already loaded is compared with.
        public var loadSeconds = 0.0, locateSeconds = 0.0
        /// The first invalid fix: its 1-based row and why.
        public var firstInvalid: (row: Int, why: InvalidFix)?
        /// Valid fixes with no accuracy, located as exact positions (accuracy 0).
        public var withoutAccuracy = 0
    }

    struct Point { var row: Int; var p: LonLat; var accuracy: Double }

    /// One fix inside (or undecided in) one area: the fix's 1-based row in
    /// the input, and the area's place in its `Pairs.ids`.
    public struct Pair: Sendable {
        public var row: Int
        public var area: Int32
        public var verdict: Verdict
    }

    /// A chunk's pairs, in row order, then area_id order. The ids are
    /// shared by every chunk located through the grid (all the catalog's, in
    /// grid order: `idsVersion` stays the same), so a writer can keep what
    /// it made of an id once; through the index each chunk has its own.
    public struct Pairs {
        public var ids: [String]
        public var idsVersion: Int
        public var all: [Pair]
    }

    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }

    /// At most this many fixes are located at a time (below 2^22: `mortonOrder`).
    static let chunkFixes = 50_000

    /// `emit` gets each chunk's pairs, chunk after chunk in input order;
    /// `beforeChunk` is asked before each chunk is located, so a consumer of
    /// the pairs that failed on another thread stops the batch at once. The
    /// fixes come made into `Input`s (BatchLocate+Input.swift).
    public static func run(_ db: Connection, inputs: some Sequence<Input>, confidence: Double?,
                           beforeChunk: () throws -> Void = {}, emit: (Pairs) throws -> Void) throws -> Report {
        var report = Report()
        var started = now()
        // The grid of every box is built only once the batch is known not to
        // be small (`locateThroughIndex`).
        let fewFixes = try fewFixesLimit(db)
        report.loadSeconds = now() - started
        var areas: OnDemandAreas?
        var chunk: [Point] = []
        func flush() throws {
            try beforeChunk()
            if areas == nil {
                started = now()
                areas = try OnDemandAreas(db)
                report.loadSeconds += now() - started
            }
            guard let areas else { return }
            let t = now(), preparing = areas.preparingSeconds
            let pairs = try locate(chunk, areas, confidence)
            // The areas' preparation, inside the locating, counts as loading.
            report.loadSeconds += areas.preparingSeconds - preparing
            try emitAll(pairs, at: t + areas.preparingSeconds - preparing)
        }
        func emitAll(_ pairs: Pairs, at t: Double) throws {
            report.locateSeconds += now() - t
            try emit(pairs)
            report.pairs += pairs.all.count
            chunk.removeAll(keepingCapacity: true)
        }
        for input in inputs {
            if case .unreadable(let e) = input { throw e }
            report.fixes += 1
            guard case .position(let p, let accuracy, let given) = input else {
                report.invalid += 1
                if report.firstInvalid == nil, case .invalid(let why) = input { report.firstInvalid = (report.fixes, why) }
                continue
            }
            if !given { report.withoutAccuracy += 1 }
            chunk.append(Point(row: report.fixes, p: p, accuracy: accuracy))
            if chunk.count >= chunkFixes { try flush() }
        }
        if areas == nil && chunk.count < fewFixes {
            let t = now()
            try emitAll(try locateThroughIndex(db, chunk, confidence, idsVersion: 1), at: t)
        } else {
            try flush()
        }
        return report
    }

    /// Each point is walked through the grid once, on every core: a
    /// candidate already prepared is judged at once; one not yet prepared is
    /// set aside with its point. The areas set aside are then prepared
    /// (`OnDemandAreas.prepare`) and their pairs judged, on every core. A walk
    /// to find the unprepared candidates first, then a second to judge, cost
    /// each fix its grid walk twice (the walk, with its box tests, is most of
    /// what a fix costs besides its shapes).
    ///
    /// Points are visited in Morton order of their position, so consecutive
    /// points meet the same areas while those are still in the CPU cache (in
    /// arrival order each fix would meet its shapes cold); the pairs are then
    /// put back in point order by a counting sort, and a point with pairs
    /// set aside gets its pairs sorted by area: each point's pairs in area_id order.
    private static func locate(_ points: [Point], _ catalog: OnDemandAreas, _ confidence: Double?) throws -> Pairs {
        guard !points.isEmpty else { return Pairs(ids: catalog.grid.ids, idsVersion: 0, all: []) }
        let order = mortonOrder(points)
        let width = min(Parallel.width, max(1, points.count / 1000))
        var walks = [Walk](repeating: Walk(), count: width)
        walks.withUnsafeMutableBufferPointer { walksBuffer in
            let out = UnsafeMutableBufferPointerBox(walksBuffer)
            Parallel.run(width) { w in
                out.buffer[w] = walk(order[(points.count * w / width)..<(points.count * (w + 1) / width)], points, catalog, confidence)
            }
        }
        let later = walks.flatMap(\.later)
        try catalog.prepare(later.map { Int($0.area) })
        let laterWidth = min(Parallel.width, max(1, later.count / 5000))
        var judged = [[Found]](repeating: [], count: laterWidth)
        judged.withUnsafeMutableBufferPointer { judgedBuffer in
            let out = UnsafeMutableBufferPointerBox(judgedBuffer)
            Parallel.run(laterWidth) { w in
                out.buffer[w] = judgeSetAside(later[(later.count * w / laterWidth)..<(later.count * (w + 1) / laterWidth)], points, catalog, confidence)
            }
        }
        return inPointOrder(walks.map(\.found) + judged, mixed: later.map(\.point) + walks.flatMap(\.onSeam), points, ids: catalog.grid.ids)
    }

    /// What one thread's walk found: pairs judged, (point, area) pairs
    /// whose area was not prepared yet, and the points on ±180 (whose pairs
    /// come from two lists, so not in area order).
    private struct Walk { var found: [Found] = []; var later: [(point: Int32, area: Int32)] = []; var onSeam: [Int32] = [] }

    private static func walk(_ range: ArraySlice<Int>, _ points: [Point], _ catalog: OnDemandAreas, _ confidence: Double?) -> Walk {
        let grid = catalog.grid
        var walk = Walk()
        catalog.handles.withUnsafeBufferPointer { areas in
            for k in range {
                let point = points[k]
                func judge(_ index: Int, _ area: JudgedArea) {
                    guard heldByShapeBox(area, point.p) else { return }
                    let v = verdict(area, point, confidence)
                    if v != .outside { walk.found.append(Found(point: Int32(k), area: Int32(index), verdict: v)) }
                }
                func setAside(_ index: Int) { walk.later.append((Int32(k), Int32(index))) }
                if abs(point.p.lon) == 180 {
                    // +180 and -180 are one meridian, and a shape touching only one
                    // side holds only that spelling in its box: both are asked, each
                    // area once (the pairs are put in area_id order afterwards).
                    var seen: [Int] = []
                    walk.onSeam.append(Int32(k))
                    for lon in [-180.0, 180.0] {
                        grid.forEachCandidate(at: LonLat(lon: lon, lat: point.p.lat), in: areas,
                                              present: { i, a in if !seen.contains(i) { seen.append(i); judge(i, a) } },
                                              missing: { i in if !seen.contains(i) { seen.append(i); setAside(i) } })
                    }
                } else {
                    grid.forEachCandidate(at: point.p, in: areas, present: judge, missing: setAside)
                }
            }
        }
        return walk
    }

    /// The pairs set aside, judged now that their areas are prepared.
    private static func judgeSetAside(_ later: ArraySlice<(point: Int32, area: Int32)>, _ points: [Point], _ catalog: OnDemandAreas, _ confidence: Double?) -> [Found] {
        var found: [Found] = []
        for (k, i) in later {
            // `prepare` made every one of them (or threw).
            guard let area = catalog.prepared[Int(i)], heldByShapeBox(area, points[Int(k)].p) else { continue }
            let v = verdict(area, points[Int(k)], confidence)
            if v != .outside { found.append(Found(point: k, area: i, verdict: v)) }
        }
        return found
    }

    /// The found pairs by a counting sort on the point; the points in
    /// `mixed` (some of whose pairs were judged after the walk, or found on
    /// both sides of ±180) then have their pairs sorted by area, the others
    /// being in area order already.
    private static func inPointOrder(_ parts: [[Found]], mixed: [Int32], _ points: [Point], ids: [String]) -> Pairs {
        var start = [Int](repeating: 0, count: points.count + 1)
        for part in parts { for f in part { start[Int(f.point) + 1] += 1 } }
        for k in 0..<points.count { start[k + 1] += start[k] }
        let bounds = start
        var sorted = [Pair](repeating: Pair(row: 0, area: 0, verdict: .outside), count: start[points.count])
        for part in parts {
            for f in part {
                sorted[start[Int(f.point)]] = Pair(row: points[Int(f.point)].row, area: f.area, verdict: f.verdict)
                start[Int(f.point)] += 1
            }
        }
        var done = Set<Int32>()
        for k in mixed where done.insert(k).inserted {
            let range = bounds[Int(k)]..<bounds[Int(k) + 1]
            if range.count > 1 { sorted[range].sort { $0.area < $1.area } }
        }
        return Pairs(ids: ids, idsVersion: 0, all: sorted)
    }

    /// Whether the area's own shape box holds `p` (at ±180°, either
    /// spelling of the meridian), both ends included. A pair is reported
    /// only where both the index box (the grid's, the R*Tree's) and this
    /// one hold the fix: a polygon's index box is a hair larger than its own,
    /// a circle's own box wider than its index box (`IndexedAreas`), and
    /// both paths of a batch then give the same pairs.
    static func heldByShapeBox(_ area: JudgedArea, _ p: LonLat) -> Bool {
        let b = area.shape.boundingBox
        func holds(_ lon: Double) -> Bool { lon >= b.minLon && lon <= b.maxLon && p.lat >= b.minLat && p.lat <= b.maxLat }
        return holds(p.lon) || (abs(p.lon) == 180 && holds(-p.lon))
    }

    /// gf_area_contains' verdict: the area's rules, with `confidence` for every area when given.
    static func verdict(_ area: JudgedArea, _ point: Point, _ confidence: Double?) -> Verdict {
        var rule = area.rule
        if let c = confidence { rule.confidence = c }
        return rule.verdict(area.shape, at: point.p, accuracy: point.accuracy)
    }

    /// A pair as the threads find it: positions, no strings.
    private struct Found { var point: Int32; var area: Int32; var verdict: Verdict }

    /// The points' indices in Morton order of their positions (ties in
    /// index order): each key (42 bits) and its index (below 2^22: a chunk
    /// holds at most `chunkFixes`) packed in one integer, sorted by the key's
    /// bits alone, 11 at a time, least significant first (a radix sort: no
    /// comparisons, a few passes over the chunk). Each pass is stable and
    /// the first starts in index order, so ties stay in index order.
    private static func mortonOrder(_ points: [Point]) -> [Int] {
        var packed = points.indices.map { mortonKey(points[$0].p) << 22 | UInt64($0) }
        var spare = packed
        packed.withUnsafeMutableBufferPointer { a in
            spare.withUnsafeMutableBufferPointer { b in
                var (from, to) = (a, b)
                var starts = [Int](repeating: 0, count: 2049)
                for shift in stride(from: UInt64(22), to: 64, by: 11) {
                    for d in starts.indices { starts[d] = 0 }
                    for v in from { starts[Int((v >> shift) & 2047) + 1] += 1 }
                    for d in 1..<starts.count { starts[d] += starts[d - 1] }
                    for v in from {
                        let d = Int((v >> shift) & 2047)
                        to[starts[d]] = v
                        starts[d] += 1
                    }
                    swap(&from, &to)
                }
                // Four passes: the sorted values are back in `a`.
            }
        }
        return packed.map { Int($0 & (1 << 22 - 1)) }
    }

    /// Interleaved bits of the position quantised to 2^21 steps a side (~19 m).
    private static func mortonKey(_ p: LonLat) -> UInt64 {
        func spread(_ v: UInt64) -> UInt64 {
            var x = v & 0x1F_FFFF
            x = (x | x << 32) & 0x1F_0000_0000_FFFF
            x = (x | x << 16) & 0x1F_0000_FF00_00FF
            x = (x | x << 8) & 0x100F_00F0_0F00_F00F
            x = (x | x << 4) & 0x10C3_0C30_C30C_30C3
            x = (x | x << 2) & 0x1249_2492_4924_9249
            return x
        }
        let x = UInt64((p.lon + 180) / 360 * 2_097_151), y = UInt64((p.lat + 90) / 180 * 2_097_151)
        return spread(x) | spread(y) << 1
    }
}

