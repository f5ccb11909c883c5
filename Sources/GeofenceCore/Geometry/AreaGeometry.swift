/// What a verdict and a distance need from an area's geometry, whichever
/// way it is held: `PreparedShape` (parsed once, indexed, cached) or
/// `UnpreparedPolygons` (read in place from a small SpatiaLite BLOB).
/// Both give the same answers bit for bit; they differ only in cost.
///
/// Distances take the fix as a `FixFrame`, so that one fix asked against
/// many areas pays for its trigonometry once; the LonLat forms build it.
public protocol AreaGeometry {
    /// True when the point is in the interior (boundary points are outside, as in GEOS).
    func contains(_ p: LonLat) -> Bool
    /// Interior, exterior or boundary, exactly (PointLocator).
    func location(of p: LonLat) -> PointLocation
    /// Unsigned geodesic distance in metres from the fix to the boundary.
    func boundaryDistance(from fix: FixFrame) -> Double
    /// Whether the fix is at least `threshold` metres from the boundary.
    func isAtLeast(_ threshold: Double, from fix: FixFrame) -> Bool
    /// Signed geodesic distance in metres to the boundary: positive inside,
    /// exactly 0 on it.
    func signedDistance(from fix: FixFrame) -> Double
}

extension AreaGeometry {
    public func signedDistance(from fix: FixFrame) -> Double {
        switch location(of: fix.p) {
        case .boundary: return 0
        case .inside: return boundaryDistance(from: fix)
        case .outside: return -boundaryDistance(from: fix)
        }
    }

    public func signedDistance(_ p: LonLat) -> Double { signedDistance(from: FixFrame(p)) }
    public func boundaryDistance(_ p: LonLat) -> Double { boundaryDistance(from: FixFrame(p)) }
    public func isAtLeast(_ threshold: Double, fromBoundary p: LonLat) -> Bool {
        threshold <= 0 || isAtLeast(threshold, from: FixFrame(p))
    }
}
