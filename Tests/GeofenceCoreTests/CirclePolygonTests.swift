import XCTest
@testable import GeofenceCore

/// A circle traced as a polygon: Vincenty's direct formula lands where the
/// inverse measures, every traced ring stays within the stated tolerance of
/// its circle, and a ring changed by more than that is told apart.
final class CirclePolygonTests: XCTestCase {
    func testDirectAndInverseAgreeToTheMillimetre() {
        var worst = 0.0
        for lat in stride(from: -85.0, through: 85.0, by: 17.0) {
            for distance in [1.0, 150.0, 25_000.0, 800_000.0, 9_000_000.0] {
                for k in 0..<12 {
                    let azimuth = Double(k) * Double.pi / 6 + 0.1
                    let p = LonLat(lon: 10, lat: lat)
                    guard let q = Geodesy.destination(from: p, azimuth: azimuth, distance: distance) else {
                        return XCTFail("no destination from \(p) at \(azimuth) for \(distance) m")
                    }
                    worst = max(worst, abs(Geodesy.distance(p, q) - distance))
                }
            }
        }
        XCTAssertLessThan(worst, 0.001)
    }

    func testTracedRingsStayWithinTheTolerance() {
        for radius in [0.5, 3.0, 100.0, 2_500.0, 60_000.0, 750_000.0, 4_000_000.0] {
            for lat in [-70.0, -33.9, 0.0, 48.85, 80.0] {
                let c = Circle(center: LonLat(lon: 2.29, lat: lat), radiusM: radius)
                guard let ring = CirclePolygon.ring(tracing: c) else { continue }   // across a pole or the antimeridian
                XCTAssertEqual(ring.points.first, ring.points.last)
                XCTAssertGreaterThanOrEqual(ring.points.count, 9)
                let worst = CirclePolygon.deviation(of: ring, from: c)
                XCTAssertLessThanOrEqual(worst.metres, CirclePolygon.tolerance(radius: radius), "radius \(radius) at \(lat)")
            }
        }
    }

    func testCirclesThatWouldWrapHaveNoRing() {
        XCTAssertNil(CirclePolygon.ring(tracing: Circle(center: LonLat(lon: 179.99, lat: 0), radiusM: 5_000)))
        XCTAssertNil(CirclePolygon.ring(tracing: Circle(center: LonLat(lon: 0, lat: 89.5), radiusM: 100_000)))
    }

    func testAMovedVertexOrADroppedOneIsSeen() throws {
        let c = Circle(center: LonLat(lon: -74.006, lat: 40.7128), radiusM: 250)
        let ring = try XCTUnwrap(CirclePolygon.ring(tracing: c))
        var moved = ring
        moved.points[5].lat += 0.00001   // about 1.1 m
        XCTAssertGreaterThan(CirclePolygon.deviation(of: moved, from: c).metres, CirclePolygon.tolerance(radius: 250))
        var dropped = ring
        dropped.points.remove(at: 7)
        XCTAssertGreaterThan(CirclePolygon.deviation(of: dropped, from: c).metres, CirclePolygon.tolerance(radius: 250))
    }
}
