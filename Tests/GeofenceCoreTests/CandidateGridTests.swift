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

final class CandidateGridMaskTests: XCTestCase {
    /// 400 areas over 0.2°: circles, slivers, stars (every other with a
    /// square hole), from a fixed seed; `rnd` goes on from where they left it.
    static func shapes() -> (shapes: [(String, PreparedShape)], rnd: () -> Double) {
        var seed: UInt64 = 11
        func rnd() -> Double { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Double(seed >> 11) / Double(1 << 53) }
        var shapes: [(String, PreparedShape)] = []
        for i in 0..<400 {
            let cx = 139.7 + rnd() * 0.2, cy = 35.6 + rnd() * 0.2, r = 0.0005 + rnd() * 0.01
            let shape: Shape
            switch i % 4 {
            case 0:
                shape = .circle(Circle(center: LonLat(lon: cx, lat: cy), radiusM: r * 90_000))
            case 1:  // a sliver: a long thin triangle
                shape = .polygons([Polygon([Ring([LonLat(lon: cx, lat: cy), LonLat(lon: cx + r, lat: cy + r * 0.02),
                                                                LonLat(lon: cx + r * 0.5, lat: cy + r * 0.03), LonLat(lon: cx, lat: cy)])])])
            default:  // a star, with a square hole in every other one
                let n = 5 + Int(rnd() * 40)
                var outer = (0..<n).map { k -> LonLat in
                    let a = Double(k) / Double(n) * 2 * .pi, rr = r * (0.4 + 0.6 * rnd())
                    return LonLat(lon: cx + rr * cos(a), lat: cy + rr * sin(a) * 0.8)
                }
                outer.append(outer[0])
                var rings = [Ring(outer)]
                if i % 2 == 0 {
                    let h = r * 0.1
                    rings.append(Ring([LonLat(lon: cx - h, lat: cy - h), LonLat(lon: cx - h, lat: cy + h), LonLat(lon: cx + h, lat: cy + h),
                                               LonLat(lon: cx + h, lat: cy - h), LonLat(lon: cx - h, lat: cy - h)]))
                }
                shape = .polygons([Polygon(rings)])
            }
            shapes.append((String(format: "A%03d", i), PreparedShape(shape)))
        }
        return (shapes, rnd)
    }

    /// `grid` with every area's masks, made up front as a batch makes them.
    static func masked(_ grid: CandidateGrid, _ shapes: [(String, PreparedShape)]) -> CandidateGrid {
        var outside = [UInt64](repeating: 0, count: grid.entryCount), inside = outside
        outside.withUnsafeMutableBufferPointer { o in
            inside.withUnsafeMutableBufferPointer { n in
                for i in shapes.indices { grid.writeMasks(ofArea: i, shapes[i].1, outside: o, inside: n) }
            }
        }
        return grid.withMasks(outside: outside, inside: inside)
    }

    /// Skipping by the outside masks leaves out only areas that do not
    /// contain the point, and the inside masks vouch only for areas that do:
    /// random polygons with holes, thin slivers, circles, and points on
    /// sub-cell borders, on edges and at vertices.
    func testMasksNeverMisjudgeAPoint() {
        let (shapes, rnd) = Self.shapes()
        let grid = Self.masked(CandidateGrid(shapes.map { ($0.0, $0.1.boundingBox) }), shapes)
        var probes = (0..<20_000).map { _ in LonLat(lon: 139.69 + rnd() * 0.23, lat: 35.59 + rnd() * 0.23) }
        // Sub-cell borders, and vertices and edge midpoints of the shapes.
        let sub = grid.cell / Double(CandidateGrid.side)
        for _ in 0..<2_000 {
            let p = probes[Int(rnd() * 20_000)]
            probes.append(LonLat(lon: grid.origin.lon + ((p.lon - grid.origin.lon) / sub).rounded() * sub, lat: p.lat))
            probes.append(LonLat(lon: p.lon, lat: grid.origin.lat + ((p.lat - grid.origin.lat) / sub).rounded() * sub))
        }
        for (_, s) in shapes where s.edgeCount > 0 {
            for e in 0..<s.edgeCount {
                let edge = s.edge(e)
                probes.append(LonLat(lon: edge.lon1, lat: edge.lat1))
                probes.append(LonLat(lon: (edge.lon1 + edge.lon2) / 2, lat: (edge.lat1 + edge.lat2) / 2))
            }
        }
        // On the random probes, count the candidates the point is outside of, and how many of them were skipped.
        var skipped = 0, outsideCandidates = 0, vouched = 0, insideCandidates = 0
        for (n, p) in probes.enumerated() {
            var all: [Int] = [], kept: [Int] = []
            grid.forEachCandidate(at: p) { all.append($0) }
            grid.forEachCandidate(at: p, skippingOutside: true) { i, knownInside in
                kept.append(i)
                if knownInside {
                    XCTAssertTrue(shapes[i].1.contains(p), "\(grid.ids[i]) vouched for at \(p)")
                    if n < 20_000 { vouched += 1 }
                }
            }
            if n < 20_000 { insideCandidates += all.filter { shapes[$0].1.contains(p) }.count }
            XCTAssertTrue(Set(kept).isSubset(of: all))
            for i in Set(all).subtracting(kept) {
                XCTAssertFalse(shapes[i].1.contains(p), "\(grid.ids[i]) skipped at \(p)")
                if n < 20_000 { skipped += 1 }
            }
            if n < 20_000 { outsideCandidates += all.filter { !shapes[$0].1.contains(p) }.count }
        }
        // And the masks do their job: most candidates the point is outside of are skipped.
        XCTAssertGreaterThan(Double(skipped), 0.4 * Double(outsideCandidates), "\(skipped) of \(outsideCandidates)")
        XCTAssertGreaterThan(Double(vouched), 0.4 * Double(insideCandidates), "\(vouched) of \(insideCandidates)")
    }
    /// A session's masks, filled as it meets areas (`MasksAsMet`, as
    /// WorkerCatalog fills them: an area masked at its second visit), skip
    /// and vouch only as the masks made up front do: before an area is
    /// masked its candidates are those of a grid without masks, and once
    /// every area is masked they are exactly the up-front ones.
    func testMasksFilledAsAreasAreMetAgreeWithMasksMadeUpFront() {
        let (shapes, rnd) = Self.shapes()
        let plain = CandidateGrid(shapes.map { ($0.0, $0.1.boundingBox) })
        let upFront = Self.masked(plain, shapes)
        let asMet = MasksAsMet(plain)
        var masked = Set<Int>(), visits: [Int: Int] = [:], vouched = 0
        func upFrontVisits(at q: LonLat) -> [[Int]] {
            var out: [[Int]] = []
            upFront.forEachCandidate(at: q, skippingOutside: true) { out.append([$0, $1 ? 1 : 0]) }
            return out
        }
        func asMetVisits(at q: LonLat) -> [[Int]] {
            var out: [[Int]] = []
            asMet.forEachCandidate(at: q, skippingOutside: true) { out.append([$0, $1 ? 1 : 0]) }
            return out
        }
        // A walk: each step near the last, as a subject moves, and now and then a jump.
        var p = LonLat(lon: 139.8, lat: 35.7)
        for step in 0..<30_000 {
            p = step % 500 == 0 ? LonLat(lon: 139.69 + rnd() * 0.23, lat: 35.59 + rnd() * 0.23)
                : LonLat(lon: p.lon + (rnd() - 0.5) * 0.001, lat: p.lat + (rnd() - 0.5) * 0.001)
            var all: [Int] = []
            plain.forEachCandidate(at: p) { all.append($0) }
            var kept: [Int] = []
            asMet.forEachCandidate(at: p, skippingOutside: true) { i, knownInside in
                kept.append(i)
                visits[i, default: 0] += 1
                if knownInside { vouched += 1; XCTAssertTrue(shapes[i].1.contains(p), "\(plain.ids[i]) vouched for at \(p)") }
                if !masked.contains(i) { XCTAssertFalse(knownInside, "\(plain.ids[i]) vouched for before it was masked") }
                if asMet.meets(area: i) { XCTAssertTrue(masked.insert(i).inserted); asMet.add(area: i, shapes[i].1) }
            }
            XCTAssertTrue(Set(kept).isSubset(of: all))
            for i in Set(all).subtracting(kept) {
                XCTAssertTrue(masked.contains(i), "\(plain.ids[i]) skipped before it was masked")
                XCTAssertFalse(shapes[i].1.contains(p), "\(plain.ids[i]) skipped at \(p)")
            }
        }
        XCTAssertGreaterThan(vouched, 1_000, "the walk's inside masks vouched for candidates")
        // Masked at the second visit, not the first.
        XCTAssertEqual(masked, Set(visits.filter { $0.value >= 2 }.keys))
        XCTAssertLessThan(masked.count, visits.count, "some areas were met once only")
        // Every area masked: the same visits as masks made up front, at every point.
        for i in shapes.indices where masked.insert(i).inserted { asMet.add(area: i, shapes[i].1) }
        for _ in 0..<5_000 {
            let q = LonLat(lon: 139.69 + rnd() * 0.23, lat: 35.59 + rnd() * 0.23)
            XCTAssertEqual(asMetVisits(at: q), upFrontVisits(at: q), "at \(q)")
        }
    }
    /// A shape that reaches past the box the index gives it (a circle's
    /// radius, or an R*Tree row, edited by hand) is a candidate only inside
    /// its box, with masks as without: an inside bit stands for the box test
    /// the walk skips.
    func testInsideMasksStayWithinTheIndexBox() {
        let square = PreparedShape(.polygons([Polygon([Ring([LonLat(lon: 22.07, lat: 22.07), LonLat(lon: 22.13, lat: 22.07),
                                                             LonLat(lon: 22.13, lat: 22.13), LonLat(lon: 22.07, lat: 22.13),
                                                             LonLat(lon: 22.07, lat: 22.07)])])]))
        let circle = PreparedShape(.circle(Circle(center: LonLat(lon: 22.1, lat: 22.1), radiusM: 4_000)))
        for shape in [square, circle] {
            let narrow = BoundingBox(minLon: 22.09, minLat: 22.09, maxLon: 22.11, maxLat: 22.11)
            let grid = Self.masked(CandidateGrid([("C", narrow), ("D", BoundingBox(minLon: 22.0, minLat: 22.0, maxLon: 22.2, maxLat: 22.2))]),
                                   [("C", shape), ("D", square)])
            var visits = 0
            for x in 0...100 {
                for y in 0...100 {
                    let p = LonLat(lon: 22.05 + Double(x) * 0.001, lat: 22.05 + Double(y) * 0.001)
                    grid.forEachCandidate(at: p, skippingOutside: true) { i, knownInside in
                        guard i == 0 else { return }
                        visits += 1
                        XCTAssertTrue(narrow.minLon <= p.lon && p.lon <= narrow.maxLon && narrow.minLat <= p.lat && p.lat <= narrow.maxLat,
                                      "C visited at \(p), outside its box")
                        XCTAssertTrue(!knownInside || shape.contains(p))
                    }
                }
            }
            XCTAssertGreaterThan(visits, 0)
        }
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
