import XCTest
@testable import GeofenceCore

final class CandidateGridTests: XCTestCase {
    /// Same answer as testing every box, for dense small boxes, wide boxes,
    /// boxes spanning the globe (antimeridian-cut areas), and points outside.
    func testAgreesWithTestingEveryBox() {
        var seed: UInt64 = 3
        func rnd() -> Double { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Double(seed >> 11) / Double(1 << 53) }
        var items: [(String, BoundingBox)] = []
        for i in 0..<5000 {
            let lon = 139 + rnd() * 2, lat = 35 + rnd() * 1.5, w = rnd() * (i % 50 == 0 ? 1.5 : 0.02)
            items.append(("A\(i)", BoundingBox(minLon: lon, minLat: lat, maxLon: lon + w, maxLat: lat + w * 0.8)))
        }
        items.append(("world", BoundingBox(minLon: -180, minLat: -20, maxLon: 180, maxLat: -10)))
        items.append(("point", BoundingBox(minLon: 139.5, minLat: 35.5, maxLon: 139.5, maxLat: 35.5)))
        let grid = CandidateGrid(items)
        var probes = (0..<4000).map { _ in LonLat(lon: 138.8 + rnd() * 2.6, lat: 34.8 + rnd() * 2) }
        probes += [LonLat(lon: 139.5, lat: 35.5), LonLat(lon: 0, lat: -15), LonLat(lon: 180, lat: -10), LonLat(lon: -170, lat: 60)]
        for p in probes {
            let expected = items.filter { p.lon >= $0.1.minLon && p.lon <= $0.1.maxLon && p.lat >= $0.1.minLat && p.lat <= $0.1.maxLat }.map(\.0)
            XCTAssertEqual(grid.candidates(at: p).sorted(), expected.sorted(), "\(p)")
        }
        XCTAssertEqual(CandidateGrid([]).candidates(at: LonLat(lon: 0, lat: 0)), [])
    }

    /// Windows give exactly the point query's answer for interleaved walks,
    /// read the index far less often than once per point while the walks fit
    /// in the windows kept, and fall back to point queries (rather than
    /// reading a window per point) when they do not.
    /// An area's grid index by its id (the preparation fills masks by it),
    /// whatever order the boxes came in; ids compare as Swift strings.
    func testIndexOfAnId() {
        let ids = ["b", "a", "é", "e\u{301}", "e\u{301}x", "A", "a1", "zz", "", "a0"]
        let grid = CandidateGrid(ids.map { ($0, BoundingBox(minLon: 0, minLat: 0, maxLon: 1, maxLat: 1)) })
        for id in ids {
            XCTAssertEqual(grid.index(of: id).map { Array(grid.ids[$0].utf8) }, Array(id.utf8), id)
        }
        for missing in ["c", "a2", " ", "zzz"] { XCTAssertNil(grid.index(of: missing), missing) }
        // The two spellings of "é" are the pair judgement cannot tell apart.
        let pair = grid.ambiguousIds
        XCTAssertEqual(Set([pair?.0, pair?.1].compactMap { $0.map { Array($0.utf8) } }), [[0xC3, 0xA9], [0x65, 0xCC, 0x81]])
        XCTAssertNil(CandidateGrid(ids.filter { $0 != "é" }.map { ($0, BoundingBox(minLon: 0, minLat: 0, maxLon: 1, maxLat: 1)) }).ambiguousIds)
        // The grid's order names, for each grid index, the item it came from:
        // what `index(of:)` finds by the id.
        let items = ids.enumerated().map { k, id in (id, BoundingBox(minLon: Double(k), minLat: 0, maxLon: Double(k) + 0.5, maxLat: 1)) }
        let order = CandidateGrid.order(of: items)
        XCTAssertEqual(order.sorted(), Array(items.indices))
        for (g, k) in order.enumerated() { XCTAssertEqual(CandidateGrid(items, order: order).index(of: items[k].0), g, items[k].0) }
    }

    func testWindowsAgreeWithAPointQuery() throws {
        var seed: UInt64 = 7
        func rnd() -> Double { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Double(seed >> 11) / Double(1 << 53) }
        var items: [(String, BoundingBox)] = []
        for i in 0..<3000 {
            let lon = 139.7 + rnd() * 0.1, lat = 35.6 + rnd() * 0.1, w = rnd() * 0.01
            items.append(("A\(i)", BoundingBox(minLon: lon, minLat: lat, maxLon: lon + w, maxLat: lat + w * 0.8)))
        }
        items.append(("wide", BoundingBox(minLon: 139, minLat: 35, maxLon: 141, maxLat: 36)))
        func meets(_ a: BoundingBox, _ b: BoundingBox) -> Bool {
            a.minLon <= b.maxLon && a.maxLon >= b.minLon && a.minLat <= b.maxLat && a.maxLat >= b.minLat
        }
        func holding(_ p: LonLat) -> [String] {
            items.filter { p.lon >= $0.1.minLon && p.lon <= $0.1.maxLon && p.lat >= $0.1.minLat && p.lat <= $0.1.maxLat }.map(\.0).sorted()
        }
        for walkers in [20, CandidateWindows.kept * 3] {
            var windows = CandidateWindows()
            var pointQueries = 0, boxes = 0
            var walks = (0..<walkers).map { _ in LonLat(lon: 139.7 + rnd() * 0.1, lat: 35.6 + rnd() * 0.1) }
            let steps = 4000
            for step in 0..<steps {
                let k = step % walks.count
                walks[k] = LonLat(lon: walks[k].lon + (rnd() - 0.5) * 0.0004, lat: walks[k].lat + (rnd() - 0.5) * 0.0004)
                let p = walks[k]
                let index = ListIndex(items: items, meets: meets, holding: holding)
                let got = try windows.candidates(at: p, in: index)
                pointQueries += index.pointQueries.count
                boxes += index.returned
                XCTAssertEqual(got, holding(p), "\(p)")
            }
            XCTAssertEqual(windows.boxesRead, boxes, "every box the index returned is counted, window or point")
            if walkers < CandidateWindows.kept {
                XCTAssertLessThan(windows.windowsRead + pointQueries, steps / 4, "\(walkers) walks: the index is read a window at a time")
            } else {
                XCTAssertLessThan(windows.windowsRead, steps / 4, "\(walkers) walks: misses are answered by point queries")
            }
        }
    }
}

final class WholeIndexSwitchTests: XCTestCase {
    /// A session reads the whole index once its windows have cost a third of
    /// reading it, in boxes: a dense city's misses (hundreds of boxes each)
    /// get there in fewer misses than a country's (a dozen each), and the
    /// rule is asked only at every 64th miss.
    func testTheWindowsCostDecidesNotTheMisses() {
        func reads(_ misses: Int, boxesEach: Int, areas: Int) -> Bool {
            CandidateStrategy.readsWholeIndex(misses: misses, boxesRead: misses * boxesEach, areas: { areas })
        }
        XCTAssertFalse(reads(384, boxesEach: 78, areas: 100_000))   // (29,952 + 1,536) × 3 < 100,000
        XCTAssertTrue(reads(448, boxesEach: 78, areas: 100_000))
        XCTAssertFalse(reads(576, boxesEach: 13, areas: 30_000))    // (7,488 + 2,304) × 3 < 30,000
        XCTAssertTrue(reads(640, boxesEach: 13, areas: 30_000))
        XCTAssertFalse(reads(641, boxesEach: 13, areas: 30_000), "only at a 64th miss")
        XCTAssertFalse(reads(0, boxesEach: 0, areas: 0))
    }
}

/// A list of boxes as a `BoxIndex`, counting its point queries.
private final class ListIndex: BoxIndex {
    let items: [(String, BoundingBox)]
    let meets: (BoundingBox, BoundingBox) -> Bool
    let holding: (LonLat) -> [String]
    var pointQueries: [LonLat] = []
    init(items: [(String, BoundingBox)], meets: @escaping (BoundingBox, BoundingBox) -> Bool, holding: @escaping (LonLat) -> [String]) {
        self.items = items; self.meets = meets; self.holding = holding
    }
    /// How many boxes the last query returned (a window's, or the point's).
    var returned = 0
    func boxes(meeting w: BoundingBox) throws -> [(String, BoundingBox)] {
        let found = items.filter { meets($0.1, w) }.reversed() as [(String, BoundingBox)]
        returned = found.count
        return found
    }
    func ids(holding p: LonLat) throws -> [String] {
        pointQueries.append(p)
        let found = holding(p)
        returned = found.count
        return found
    }
}
