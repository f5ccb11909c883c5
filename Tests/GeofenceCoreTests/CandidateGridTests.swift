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
    func testWindowsAgreeWithAPointQuery() {
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
            var pointQueries = 0
            var walks = (0..<walkers).map { _ in LonLat(lon: 139.7 + rnd() * 0.1, lat: 35.6 + rnd() * 0.1) }
            let steps = 4000
            for step in 0..<steps {
                let k = step % walks.count
                walks[k] = LonLat(lon: walks[k].lon + (rnd() - 0.5) * 0.0004, lat: walks[k].lat + (rnd() - 0.5) * 0.0004)
                let p = walks[k]
                let got = windows.candidates(at: p, fetchWindow: { w in items.filter { meets($0.1, w) }.reversed() },
                                             pointQuery: { pointQueries += 1; return holding($0) })
                XCTAssertEqual(got, holding(p), "\(p)")
            }
            if walkers < CandidateWindows.kept {
                XCTAssertLessThan(windows.windowsRead + pointQueries, steps / 4, "\(walkers) walks: the index is read a window at a time")
            } else {
                XCTAssertLessThan(windows.windowsRead, steps / 4, "\(walkers) walks: misses are answered by point queries")
            }
        }
    }
}
