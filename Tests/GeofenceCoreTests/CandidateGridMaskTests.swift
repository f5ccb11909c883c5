import XCTest
@testable import GeofenceCore

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
