import XCTest
@testable import GeofenceCore

/// The short-range chord path must agree with Vincenty (the exact method it
/// replaces) far inside the promised 0.01 m, at every latitude, across the
/// antimeridian, and on edges as well as between points.
final class ChordTests: XCTestCase {
    struct Random {
        var state: UInt64
        mutating func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        mutating func range(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * next() }
    }

    func testPointDistancesAgreeWithVincentyUpToTheReach() {
        var r = Random(state: 7)
        var worst = 0.0
        for _ in 0..<20_000 {
            let lat = r.range(-89.9, 89.9), lon = r.range(-180, 180)
            let p = LonLat(lon: lon, lat: lat)
            // Up to the reach in any direction; longitudes may wrap past ±180.
            let dist = r.range(0, Chord.reachM) * (r.next() < 0.3 ? 0.01 : 1), az = r.range(0, 2 * .pi)
            let m = WGS84.metresPerDegree(atLat: lat)
            var qLon = lon + dist * sin(az) / max(m.lon, 1)
            if qLon > 180 { qLon -= 360 }
            if qLon < -180 { qLon += 360 }
            let q = LonLat(lon: qLon, lat: max(-90, min(90, lat + dist * cos(az) / m.lat)))
            let exact = Geodesy.inverse(p, q).distance
            guard let d = Chord.distance(p, q) else { XCTAssertGreaterThan(exact, Chord.reachM * 0.99); continue }
            worst = max(worst, abs(d - exact))
        }
        XCTAssertLessThan(worst, 1e-4, "worst chord error \(worst) m")
    }

    func testSmallAngleSinesAndCosinesMatchLibm() {
        for k in -1000...1000 {
            let x = 0.05 * Double(k) / 1000
            let (s, c) = Chord.smallSinCos(x)
            XCTAssertEqual(s, sin(x), accuracy: 2e-17)
            XCTAssertEqual(c, cos(x), accuracy: 2e-16)
        }
    }

    func testBeyondTheReachIsLeftToVincenty() {
        XCTAssertNil(Chord.distance(LonLat(lon: 0, lat: 0), LonLat(lon: 0.2, lat: 0)))
        // Between two points of the equator closer than (1 − f)·180° the geodesic is the equator
        // itself: a·Δλ, a closed form independent of any of the engine's formulas.
        XCTAssertEqual(Geodesy.distance(LonLat(lon: 0, lat: 0), LonLat(lon: 0.2, lat: 0)),
                       6_378_137 * 0.2 * .pi / 180, accuracy: 1e-6)
    }

    /// Reference: the minimum over a dense sampling of each edge, refined by
    /// golden-section search, all with Vincenty directly.
    static func referenceDistance(_ ring: [LonLat], _ p: LonLat, samples: Int = 16) -> Double {
        var best = Double.infinity
        for k in 0..<(ring.count - 1) {
            let a = ring[k], b = ring[k + 1]
            let lon1 = p.lon + Geodesy.wrapDegrees(a.lon - p.lon)
            func d(_ t: Double) -> Double {
                Geodesy.inverse(p, LonLat(lon: lon1 + t * (b.lon - a.lon), lat: a.lat + t * (b.lat - a.lat))).distance
            }
            var bestT = 0.0, bestD = d(0)
            for s in 1...samples { let t = Double(s) / Double(samples); let v = d(t); if v < bestD { bestD = v; bestT = t } }
            var lo = max(0, bestT - 1 / Double(samples)), hi = min(1, bestT + 1 / Double(samples))
            let g = (5.0.squareRoot() - 1) / 2
            for _ in 0..<50 {
                let m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo)
                if d(m1) < d(m2) { hi = m2 } else { lo = m1 }
            }
            best = min(best, bestD, d((lo + hi) / 2))
        }
        return best
    }

    func testEdgeDistancesAgreeWithAVincentyReference() {
        var r = Random(state: 42)
        var worst = 0.0
        for case_ in 0..<400 {
            // A small random polygon (up to ~5 km across) anywhere; some touch
            // the antimeridian, so that fixes beyond it must wrap.
            let lat = r.range(-88, 88)
            let m = WGS84.metresPerDegree(atLat: lat)
            let size = r.range(50, 5_000)
            let lon = case_ % 10 == 0 ? 180 - size * 1.01 / m.lon : r.range(-170, 170)
            let n = 3 + Int(r.range(0, 12))
            var ring: [LonLat] = []
            for k in 0..<n {
                let a = 2 * .pi * Double(k) / Double(n), rad = size * r.range(0.3, 1)
                ring.append(LonLat(lon: lon + rad * cos(a) / m.lon, lat: lat + rad * sin(a) / m.lat))
            }
            ring.append(ring[0])
            let shape = PreparedShape(.polygons([Polygon([Ring(ring)])]))
            for _ in 0..<5 {
                let off = r.range(0, 12_000), az = r.range(0, 2 * .pi)
                var x = lon + off * sin(az) / m.lon
                if x > 180 { x -= 360 }
                let p = LonLat(lon: x, lat: lat + off * cos(az) / m.lat)
                let got = shape.boundaryDistance(p)
                let want = Self.referenceDistance(ring, p)
                worst = max(worst, abs(got - want))
                XCTAssertEqual(got, want, accuracy: 1e-3, "case \(case_) at \(p)")
            }
        }
        XCTAssertLessThan(worst, 1e-3)
    }

    /// A many-vertex polygon with a hole: the distance search visits latitude
    /// bands outward from the fix and must still find the nearest edge.
    func testBandWalkFindsTheNearestEdgeOfAManyVertexPolygon() {
        var r = Random(state: 9)
        let centre = LonLat(lon: 139.7, lat: 35.6)
        let m = WGS84.metresPerDegree(atLat: centre.lat)
        func ring(_ n: Int, _ lo: Double, _ hi: Double, scale: Double) -> [LonLat] {
            var pts = (0..<n).map { k -> LonLat in
                let a = 2 * .pi * Double(k) / Double(n), rad = scale * r.range(lo, hi)
                return LonLat(lon: centre.lon + rad * cos(a) / m.lon, lat: centre.lat + rad * sin(a) / m.lat)
            }
            pts.append(pts[0])
            return pts
        }
        let outer = ring(400, 0.2, 1, scale: 3_000), hole = ring(60, 0.3, 0.6, scale: 500)
        let shape = PreparedShape(.polygons([Polygon([Ring(outer), Ring(hole)])]))
        for k in 0..<24 {
            let off = k < 20 ? r.range(0, 4_000) : r.range(20_000, 40_000), az = r.range(0, 2 * .pi)
            let p = LonLat(lon: centre.lon + off * sin(az) / m.lon, lat: centre.lat + off * cos(az) / m.lat)
            let want = min(Self.referenceDistance(outer, p), Self.referenceDistance(hole, p))
            XCTAssertEqual(shape.boundaryDistance(p), want, accuracy: 1e-3 + 1e-6 * want, "fix \(k) at \(p)")
            XCTAssertEqual(shape.isAtLeast(want + 0.01, fromBoundary: p), false)
            XCTAssertEqual(shape.isAtLeast(max(0, want - 0.01), fromBoundary: p), true)
        }
    }
}
