#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The spatial index read a window at a time around recent fixes, so a
/// subject checked fix after fix (gf_check) costs one index query per few
/// hundred metres travelled instead of one per fix.
///
/// Each window holds every box that meets it, sorted by area_id; a point in a
/// window gets the boxes that hold it by filtering that list, which is exactly
/// what a point query of the index would return (a box holding the point
/// meets every window holding the point). Up to `kept` windows are kept, the
/// least recently used replaced first, so up to that many subjects checked in
/// turn keep theirs. A window costs a few point queries to read, so when most
/// lookups miss (more subjects in turn than windows, or jumps), misses are
/// answered by point queries for a while instead of reading windows no one
/// will reuse. The owner drops the whole thing when the catalog may have
/// changed. The index itself is asked through `BoxIndex` (the SQL layer's
/// is the R*Tree).
public struct CandidateWindows {
    /// Half the window's side north–south, in degrees (~220 m); east–west it
    /// is widened by 1/cos(latitude) to stay about square on the ground.
    public static let halfSideDegrees = 0.002
    public static let kept = 256
    /// Lookups per epoch; an epoch with more than a quarter misses makes the
    /// next `pointEpochs` answer misses by point queries.
    static let epoch = 128, pointEpochs = 8

    private struct Window {
        var box: BoundingBox
        /// (area_id, box), sorted by area_id (`utf8Precedes`).
        var items: [(String, BoundingBox)]
        var lastUsed: Int
    }

    private var windows: [Window] = []
    private var clock = 0
    private var epochMisses = 0
    private var pointOnly = 0
    /// How many windows were read, for tests and tuning.
    public private(set) var windowsRead = 0
    /// How many lookups found no window holding the point (each read a
    /// window or asked the index for the point).
    public private(set) var misses = 0
    /// How many boxes those misses read from the index (a window's, or the
    /// point's): with `misses`, what the windows have cost so far
    /// (`CandidateStrategy.readsWholeIndex`).
    public private(set) var boxesRead = 0

    public init() {}

    /// Ids of the areas whose box holds `p`, sorted. On a miss, the index
    /// is asked either for a window's boxes or for the point's answer itself.
    public mutating func candidates(at p: LonLat, in index: some BoxIndex) throws -> [String] {
        clock += 1
        if clock % Self.epoch == 0 {
            if pointOnly > 0 { pointOnly -= 1 } else if epochMisses * 4 > Self.epoch { pointOnly = Self.pointEpochs }
            epochMisses = 0
        }
        if let k = windows.firstIndex(where: { Self.holds($0.box, p) }) {
            windows[k].lastUsed = clock
            return windows[k].items.compactMap { Self.holds($0.1, p) ? $0.0 : nil }
        }
        epochMisses += 1
        misses += 1
        if pointOnly > 0 {
            let ids = try index.ids(holding: p)
            boxesRead += ids.count
            return ids
        }
        let half = Self.halfSideDegrees
        let widen = 1 / max(0.05, cos(p.lat * .pi / 180))
        let box = BoundingBox(minLon: max(-180, p.lon - half * widen), minLat: max(-90, p.lat - half),
                              maxLon: min(180, p.lon + half * widen), maxLat: min(90, p.lat + half))
        let window = Window(box: box, items: try index.boxes(meeting: box).sorted { $0.0.utf8Precedes($1.0) }, lastUsed: clock)
        windowsRead += 1
        boxesRead += window.items.count
        if windows.count < Self.kept {
            windows.append(window)
        } else if let oldest = windows.indices.min(by: { windows[$0].lastUsed < windows[$1].lastUsed }) {
            windows[oldest] = window
        }
        return window.items.compactMap { Self.holds($0.1, p) ? $0.0 : nil }
    }

    private static func holds(_ b: BoundingBox, _ p: LonLat) -> Bool {
        p.lon >= b.minLon && p.lon <= b.maxLon && p.lat >= b.minLat && p.lat <= b.maxLat
    }
}

/// A spatial index of area boxes, asked by `CandidateWindows` on a miss.
public protocol BoxIndex {
    /// Every (area_id, box) whose box meets `window`, in any order.
    func boxes(meeting window: BoundingBox) throws -> [(String, BoundingBox)]
    /// Ids of the areas whose box holds `p`, sorted by area_id (`utf8Precedes`).
    func ids(holding p: LonLat) throws -> [String]
}
