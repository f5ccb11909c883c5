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
/// (`OnDemandAreas`); fixes are cut into chunks, and before a chunk is
/// located the areas whose boxes its fixes fall in and that are not yet
/// prepared are read and prepared on every core. The chunk is then split
/// into contiguous ranges judged on every core, the threads only reading the
/// grid and the prepared areas, and the pairs come back in fix order, then
/// area_id order. Verdicts are those of gf_area_contains: the
/// area's accuracy limits and confidence, or `confidence` for every area.
/// Outside verdicts are not reported; undecided ones are.
public enum BatchLocate {
    public struct Report: Equatable {
        public var fixes = 0, invalid = 0, pairs = 0
        /// Wall time reading and preparing the catalog, and locating the fixes
        /// against it (not reading fixes or writing pairs): the part a peer
        /// with its data already loaded is compared with.
        public var loadSeconds = 0.0, locateSeconds = 0.0
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

    static let chunkFixes = 50_000

    /// `emit` gets each chunk's pairs, chunk after chunk in input order.
    public static func run(_ db: Connection, fixes rows: some Sequence<Judgement.Row>, confidence: Double?,
                           emit: (Pairs) throws -> Void) throws -> Report {
        var report = Report()
        var started = now()
        // The grid of every box is built only once the batch is known not to
        // be small (`locateThroughIndex`).
        let fewFixes = try fewFixesLimit(db)
        report.loadSeconds = now() - started
        var areas: OnDemandAreas?
        var chunk: [Point] = []
        func flush() throws {
            if areas == nil {
                started = now()
                areas = try OnDemandAreas(db)
                report.loadSeconds += now() - started
            }
            guard let areas else { return }
            let prepared = now()
            try areas.prepare(touchedBy: chunk.map(\.p))
            let t = now()
            report.loadSeconds += t - prepared
            try emitAll(locate(chunk, areas, confidence), at: t)
        }
        func emitAll(_ pairs: Pairs, at t: Double) throws {
            report.locateSeconds += now() - t
            try emit(pairs)
            report.pairs += pairs.all.count
            chunk.removeAll(keepingCapacity: true)
        }
        for row in rows {
            if let e = row.readError { throw e }
            report.fixes += 1
            guard row.problem == nil, case .success(let (p, accuracy)) = Fix.validatedPosition(lat: row.lat, lon: row.lon, accuracy: row.accuracy) else {
                report.invalid += 1
                continue
            }
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

    /// The catalog is only read here (its index built before), so every core
    /// shares it. Points are visited in Morton order of their position, so
    /// consecutive points meet the same areas while those are still in the
    /// CPU cache (in arrival order each fix would meet its shapes cold); the
    /// pairs are then put back in point order by a counting sort, each
    /// point's pairs staying in area_id order.
    private static func locate(_ points: [Point], _ catalog: OnDemandAreas, _ confidence: Double?) -> Pairs {
        guard !points.isEmpty else { return Pairs(ids: catalog.grid.ids, idsVersion: 0, all: []) }
        let grid = catalog.grid, handles = catalog.handles
        // Every candidate of these points was prepared (`OnDemandAreas.prepare`),
        // and `catalog` keeps it alive.
        func forEachCandidate(at p: LonLat, _ body: (Int, JudgedArea) -> Void) {
            handles.withUnsafeBufferPointer { areas in
                grid.forEachCandidate(at: p, in: areas, present: body, missing: { _ in })
            }
        }
        let keys = points.map { mortonKey($0.p) }
        let order = points.indices.sorted { keys[$0] < keys[$1] }
        let width = min(Parallel.width, max(1, points.count / 1000))
        var parts = [[Found]](repeating: [], count: width)
        parts.withUnsafeMutableBufferPointer { partsBuffer in
            let out = UnsafeMutableBufferPointerBox(partsBuffer)
            Parallel.run(width) { w in
                let range = (points.count * w / width)..<(points.count * (w + 1) / width)
                var mine: [Found] = []
                for k in order[range] {
                    let point = points[k]
                    func judge(_ index: Int, _ area: JudgedArea) {
                        let v = verdict(area, point, confidence)
                        if v != .outside { mine.append(Found(point: Int32(k), area: Int32(index), verdict: v)) }
                    }
                    if abs(point.p.lon) == 180 {
                        // +180 and -180 are one meridian, and a shape touching only one
                        // side holds only that spelling in its box: both are asked, each
                        // area once, in area_id order.
                        var both: [(index: Int, area: JudgedArea)] = []
                        for lon in [-180.0, 180.0] {
                            forEachCandidate(at: LonLat(lon: lon, lat: point.p.lat)) { i, a in
                                if !both.contains(where: { $0.index == i }) { both.append((i, a)) }
                            }
                        }
                        for c in both.sorted(by: { $0.index < $1.index }) { judge(c.index, c.area) }
                    } else {
                        forEachCandidate(at: point.p, judge)
                    }
                }
                out.buffer[w] = mine
            }
        }
        var start = [Int](repeating: 0, count: points.count + 1)
        for part in parts { for f in part { start[Int(f.point) + 1] += 1 } }
        for k in 0..<points.count { start[k + 1] += start[k] }
        var sorted = [Pair](repeating: Pair(row: 0, area: 0, verdict: .outside), count: start[points.count])
        for part in parts {
            for f in part {
                sorted[start[Int(f.point)]] = Pair(row: points[Int(f.point)].row, area: f.area, verdict: f.verdict)
                start[Int(f.point)] += 1
            }
        }
        return Pairs(ids: grid.ids, idsVersion: 0, all: sorted)
    }

    /// gf_area_contains' verdict: the area's rules, with `confidence` for every area when given.
    static func verdict(_ area: JudgedArea, _ point: Point, _ confidence: Double?) -> Verdict {
        var rule = area.rule
        if let c = confidence { rule.confidence = c }
        return rule.verdict(area.shape, at: point.p, accuracy: point.accuracy)
    }

    /// A pair as the threads find it: positions, no strings.
    private struct Found { var point: Int32; var area: Int32; var verdict: Verdict }

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
