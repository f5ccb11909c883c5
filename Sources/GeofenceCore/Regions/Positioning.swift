/// The positioning settings of the seed's location library (as a phone location library decides)
/// and the decision it makes with them: which location service a phone runs,
/// how accurately and how often it asks, and, in power-saving mode, how large
/// a wake-up region it watches at a given speed.
///
/// Units: metres, percent of battery, and speeds in metres per second (what
/// CoreLocation and Android report). The seed gives no unit or default for the
/// three speed thresholds; the defaults here (walking, cycling, driving) are
/// this project's choice.
public struct PositioningSettings: Equatable, Sendable {
    /// Requested accuracy in metres (≥ 0); nil = best (the seed's first-use value).
    public var accuracyM: Double?
    /// Distance filter in metres (≥ 0); 0 or nil = every update.
    public var distanceFilterM: Double?
    /// Battery percent (0–100) below which standard positioning gives way to significant-change.
    public var batteryThresholdPct: Double = 40
    /// Switching accuracy in metres (≥ 0): below the requested accuracy, significant-change is used.
    public var switchAccuracyM: Double = 5000
    public var powerSaving = false
    /// Wake-up region radii in metres (each ≥ 1): small, medium, large, extra large.
    public var radiiM: [Double] = [100, 1000, 2500, 5000]
    /// Speed thresholds in m/s (each ≥ 1, strictly increasing): low, medium, high.
    public var speedsMps: [Double] = [2, 5, 15]

    public init() {}

    /// The settings as gf_settings keys, with what each means and its default.
    public static let keys: [(key: String, help: String)] = [
        ("positioning_accuracy_m", "requested accuracy in metres, >= 0 (tiers: <10 best, <100 10, <1000 100, <3000 1000, else 3000); unset = best"),
        ("positioning_distance_filter_m", "distance filter in metres, >= 0; 0 or unset = every update"),
        ("positioning_battery_threshold_pct", "battery percent 0-100 below which significant-change positioning is used (default 40)"),
        ("positioning_switch_accuracy_m", "switching accuracy in metres, >= 0: below the requested accuracy means significant-change (default 5000)"),
        ("power_saving", "on|off: region watching + significant-change instead of standard positioning (default off)"),
        ("monitor_radius_small_m", "wake-up region radius below the low speed, >= 1 (default 100)"),
        ("monitor_radius_medium_m", "wake-up region radius from the low speed, >= 1 (default 1000)"),
        ("monitor_radius_large_m", "wake-up region radius from the medium speed, >= 1 (default 2500)"),
        ("monitor_radius_xlarge_m", "wake-up region radius from the high speed, >= 1 (default 5000)"),
        ("monitor_speed_low_mps", "low speed threshold in m/s, >= 1 and below medium (default 2)"),
        ("monitor_speed_medium_mps", "medium speed threshold in m/s, above low and below high (default 5)"),
        ("monitor_speed_high_mps", "high speed threshold in m/s, above medium (default 15)"),
    ]

    /// Builds the settings from stored key/values (unknown keys ignored) and
    /// checks every rule of the seed, naming the key that breaks one.
    public static func from(_ stored: [String: String]) throws -> PositioningSettings {
        var s = PositioningSettings()
        func atLeast(_ key: String, _ floor: Double) throws -> Double? { try StoredSettings.number(stored, key, atLeast: floor) }
        s.accuracyM = try atLeast("positioning_accuracy_m", 0)
        s.distanceFilterM = try atLeast("positioning_distance_filter_m", 0)
        if let v = try atLeast("positioning_battery_threshold_pct", 0) {
            guard v <= 100 else { throw InputError("must be between 0 and 100, got \(JSONValue.numberText(v))", field: "positioning_battery_threshold_pct") }
            s.batteryThresholdPct = v
        }
        if let v = try atLeast("positioning_switch_accuracy_m", 0) { s.switchAccuracyM = v }
        if let text = stored["power_saving"] {
            switch text.trimmingSpaces.lowercased() {
            case "on", "1", "true": s.powerSaving = true
            case "off", "0", "false": s.powerSaving = false
            default: throw InputError("must be on or off, got \(Echo.quoted(text))", field: "power_saving")
            }
        }
        for (i, size) in ["small", "medium", "large", "xlarge"].enumerated() {
            if let v = try atLeast("monitor_radius_\(size)_m", 1) { s.radiiM[i] = v }
        }
        let speedKeys = ["monitor_speed_low_mps", "monitor_speed_medium_mps", "monitor_speed_high_mps"]
        for (i, key) in speedKeys.enumerated() {
            if let v = try atLeast(key, 1) { s.speedsMps[i] = v }
        }
        for i in 1..<3 where !(s.speedsMps[i] > s.speedsMps[i - 1]) {
            // Name the key the user set, so the message points at what to change.
            let key = stored[speedKeys[i]] != nil ? speedKeys[i] : speedKeys[i - 1]
            throw InputError("speed thresholds must rise low < medium < high, got low \(JSONValue.numberText(s.speedsMps[0])), "
                + "medium \(JSONValue.numberText(s.speedsMps[1])), high \(JSONValue.numberText(s.speedsMps[2]))", field: key)
        }
        return s
    }

    /// The seed's five accuracy levels for a requested accuracy: -1 (best) for
    /// below 10, then 10, 100, 1000, 3000. Negative requests are an error.
    public static func accuracyTier(_ requested: Double) throws -> Int {
        guard requested >= 0 else { throw InputError("must be >= 0, got \(JSONValue.numberText(requested))", field: "accuracy") }
        switch requested {
        case ..<10: return -1
        case ..<100: return 10
        case ..<1000: return 100
        case ..<3000: return 1000
        default: return 3000
        }
    }

    /// The tier the device runs at: the requested accuracy's, best if unset.
    public var accuracyTier: Int { (try? Self.accuracyTier(accuracyM ?? 0)) ?? -1 }

    /// The distance filter the device runs with: -1 (every update) for 0 or unset.
    public var effectiveDistanceFilterM: Double { (distanceFilterM ?? 0) > 0 ? distanceFilterM! : -1 }

    /// The wake-up region radius for a speed, and the band's name.
    public func monitorRadius(speedMps: Double) -> (radiusM: Double, band: String) {
        if speedMps < speedsMps[0] { return (radiiM[0], "small") }
        if speedMps < speedsMps[1] { return (radiiM[1], "medium") }
        if speedMps < speedsMps[2] { return (radiiM[2], "large") }
        return (radiiM[3], "xlarge")
    }

    /// What a device should do at this speed and battery level.
    public func decide(speedMps: Double?, batteryPct: Double?) -> PositioningDecision {
        if powerSaving {
            let (r, band) = monitorRadius(speedMps: max(0, speedMps ?? 0))
            return PositioningDecision(service: .significantChange, powerSaving: true, accuracyTier: nil,
                                       distanceFilterM: nil, regionRadiusM: r, speedBand: band,
                                       reason: "power saving: region watching and significant-change positioning")
        }
        if let b = batteryPct, b < batteryThresholdPct {
            return PositioningDecision(service: .significantChange, powerSaving: false, accuracyTier: nil, distanceFilterM: nil,
                                       regionRadiusM: nil, speedBand: nil,
                                       reason: "battery \(JSONValue.numberText(b))% is below the threshold \(JSONValue.numberText(batteryThresholdPct))%")
        }
        if switchAccuracyM < (accuracyM ?? 0) {
            return PositioningDecision(service: .significantChange, powerSaving: false, accuracyTier: nil, distanceFilterM: nil,
                                       regionRadiusM: nil, speedBand: nil,
                                       reason: "switching accuracy \(JSONValue.numberText(switchAccuracyM)) m is below the requested accuracy \(JSONValue.numberText(accuracyM ?? 0)) m")
        }
        return PositioningDecision(service: .standard, powerSaving: false, accuracyTier: accuracyTier,
                                   distanceFilterM: effectiveDistanceFilterM, regionRadiusM: nil, speedBand: nil,
                                   reason: "standard positioning")
    }
}

public struct PositioningDecision: Equatable, Sendable {
    public enum Service: String, Sendable { case standard, significantChange = "significant-change" }
    public var service: Service
    public var powerSaving: Bool
    /// -1 best, 10, 100, 1000 or 3000 (standard positioning only).
    public var accuracyTier: Int?
    /// -1 = every update (standard positioning only).
    public var distanceFilterM: Double?
    /// Power saving only: the wake-up region's radius and the speed band that chose it.
    public var regionRadiusM: Double?
    public var speedBand: String?
    public var reason: String

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("service", .string(service.rawValue)), ("power_saving", .bool(powerSaving))]
        if let t = accuracyTier { members.append(("accuracy_tier_m", .number(String(t)))) }
        if let d = distanceFilterM { members.append(("distance_filter_m", .number(d))) }
        if let r = regionRadiusM { members.append(("region_radius_m", .number(r))) }
        if let b = speedBand { members.append(("speed_band", .string(b))) }
        members.append(("reason", .string(reason)))
        return .object(members)
    }
}
