import GeofenceCore
#if canImport(Glibc)
import Glibc
#endif

/// `geofence locate --fixes FILE`: for every fix of a batch, the verdict of
/// every area whose box holds it — the question "which fences contain each
/// fix" answered without a query per fix.
///
/// How: every area is read in one pass and prepared on every core into a
/// `MemoryCatalog` (with its `CandidateGrid`), which the threads then only
/// read; fixes are cut into chunks, each chunk split into contiguous ranges
/// judged on every core, and the pairs come back in fix order, then area_id
/// order. Verdicts are those of gf_area_contains: the
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
    struct Pair { var row: Int; var areaId: String; var verdict: Verdict }

    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }

    static let chunkFixes = 50_000

    /// `emit(row, area_id, verdict)` gets each pair; `row` is the fix's 1-based row in the input.
    public static func run(_ db: Connection, fixes rows: some Sequence<Judgement.Row>, confidence: Double?,
                           emit: (Int, String, Verdict) throws -> Void) throws -> Report {
        var report = Report()
        let started = now()
        let catalog = try loadCatalog(db)
        report.loadSeconds = now() - started
        var chunk: [Point] = []
        func flush() throws {
            let t = now()
            let pairs = locate(chunk, catalog, confidence)
            report.locateSeconds += now() - t
            for pair in pairs {
                try emit(pair.row, pair.areaId, pair.verdict)
                report.pairs += 1
            }
            chunk.removeAll(keepingCapacity: true)
        }
        for row in rows {
            report.fixes += 1
            guard row.problem == nil, let lat = row.lat, let lon = row.lon, (-90...90).contains(lat), (-180...180).contains(lon),
                  (row.accuracy ?? 0) >= 0 else {
                report.invalid += 1
                continue
            }
            chunk.append(Point(row: report.fixes, p: LonLat(lon: lon, lat: lat), accuracy: row.accuracy ?? 0))
            if chunk.count >= chunkFixes { try flush() }
        }
        try flush()
        return report
    }

    /// Every area, prepared on every core, in a `MemoryCatalog` (its grid built
    /// before the threads share it, so they only read it).
    static func loadCatalog(_ db: Connection) throws -> MemoryCatalog {
        let definitions = try AreaStore(db).all()
        let confidence = Settings(db).defaultConfidence
        var prepared = [JudgedArea?](repeating: nil, count: definitions.count)
        let width = min(Parallel.width, max(1, definitions.count / 500))
        prepared.withUnsafeMutableBufferPointer { buffer in
            let out = UnsafeMutableBufferPointerBox(buffer)
            Parallel.run(width) { w in
                for i in stride(from: w, to: definitions.count, by: width) {
                    out.buffer[i] = JudgedArea(definition: definitions[i], defaultConfidence: confidence, conditions: [])
                }
            }
        }
        let catalog = MemoryCatalog(prepared.compactMap { $0 })
        catalog.buildIndex()
        return catalog
    }

    /// The catalog is only read here (its index built before), so every core shares it.
    private static func locate(_ points: [Point], _ catalog: MemoryCatalog, _ confidence: Double?) -> [Pair] {
        guard !points.isEmpty else { return [] }
        let width = min(Parallel.width, max(1, points.count / 1000))
        var parts = [[Pair]](repeating: [], count: width)
        parts.withUnsafeMutableBufferPointer { partsBuffer in
            let out = UnsafeMutableBufferPointerBox(partsBuffer)
            Parallel.run(width) { w in
                let range = (points.count * w / width)..<(points.count * (w + 1) / width)
                var mine: [Pair] = []
                for point in points[range] {
                    catalog.forEachCandidate(at: point.p) { id, found in
                        guard let area = found else { return }
                        var rule = area.rule
                        if let c = confidence { rule.confidence = c }
                        let v = rule.verdict(area.shape, at: point.p, accuracy: point.accuracy)
                        if v != .outside { mine.append(Pair(row: point.row, areaId: id, verdict: v)) }
                    }
                }
                out.buffer[w] = mine
            }
        }
        return parts.flatMap { $0 }
    }
}
