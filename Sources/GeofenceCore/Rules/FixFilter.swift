/// The device-side filters of the seed's positioning library applied to a
/// replayed batch (`geofence judge --device-filter`): a phone running with
/// these settings would never have reported the fixes this drops.
///
/// - accuracy: a fix worse than the requested accuracy tier (10, 100, 1000 or
///   3000 m) is dropped; the best tier (requests below 10 m) asks for
///   whatever the device can do, so it drops nothing.
/// - distance: a fix closer than the distance filter to the subject's last
///   accepted (judged) fix is dropped; 0 or unset drops nothing.
/// A dropped fix changes no state and is not the subject's last fix.
public struct FixFilter: Equatable, Sendable {
    public var maxAccuracyM: Double?
    public var minDistanceM: Double?

    public init(maxAccuracyM: Double?, minDistanceM: Double?) { self.maxAccuracyM = maxAccuracyM; self.minDistanceM = minDistanceM }

    public init(_ s: PositioningSettings) {
        let tier = s.accuracyTier
        maxAccuracyM = tier > 0 ? Double(tier) : nil
        minDistanceM = s.effectiveDistanceFilterM > 0 ? s.effectiveDistanceFilterM : nil
    }

    public enum Drop: Equatable, Sendable {
        case accuracy(limit: Double)
        case distance(metres: Double, limit: Double)
    }

    public func drop(_ fix: Fix, after last: Fix?) -> Drop? {
        if let limit = maxAccuracyM, fix.accuracy > limit { return .accuracy(limit: limit) }
        if let limit = minDistanceM, let last {
            let d = Geodesy.distance(last.position, fix.position)
            if d < limit { return .distance(metres: d, limit: limit) }
        }
        return nil
    }
}
