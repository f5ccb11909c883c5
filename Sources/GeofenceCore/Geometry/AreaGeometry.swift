/// What a verdict and a distance need from an area's geometry, whichever
/// way it is held: `PreparedShape` (parsed once, indexed, cached) or
/// `UnpreparedPolygons` (read in place from a small SpatiaLite BLOB).
/// Both give the same answers bit for bit; they differ only in cost.
public protocol AreaGeometry {
    /// True when the point is in the interior (boundary points are outside, as in GEOS).
    func contains(_ p: LonLat) -> Bool
    /// Unsigned geodesic distance in metres from the point to the boundary.
    func boundaryDistance(_ p: LonLat) -> Double
    /// Whether the point is at least `threshold` metres from the boundary.
    func isAtLeast(_ threshold: Double, fromBoundary p: LonLat) -> Bool
    /// Signed geodesic distance in metres to the boundary: positive inside.
    func signedDistance(_ p: LonLat) -> Double
}

extension AreaGeometry {
    public func signedDistance(_ p: LonLat) -> Double {
        let d = boundaryDistance(p)
        return contains(p) ? d : -d
    }
}
