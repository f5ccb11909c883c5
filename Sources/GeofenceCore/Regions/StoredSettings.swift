/// Reading numbers out of stored setting text (gf_settings values), with the
/// error naming the key — shared by the positioning and region settings.
enum StoredSettings {
    static func number(_ stored: [String: String], _ key: String, atLeast floor: Double) throws -> Double? {
        guard let text = stored[key] else { return nil }
        guard let v = NumberText.double(text.trimmingSpaces), v.isFinite else { throw InputError("must be a number, got \(Echo.quoted(text))", field: key) }
        guard v >= floor else { throw InputError("must be >= \(JSONValue.numberText(floor)), got \(JSONValue.numberText(v))", field: key) }
        return v
    }
}

extension RegionPlan.Options {
    /// The region_* settings, checked; defaults for the keys not stored.
    public static func from(_ stored: [String: String]) throws -> RegionPlan.Options {
        var o = RegionPlan.Options()
        if let v = try StoredSettings.number(stored, "region_margin_m", atLeast: 0) { o.marginM = v }
        if let v = try StoredSettings.number(stored, "region_min_radius_m", atLeast: 1) { o.minRadiusM = v }
        if let v = try StoredSettings.number(stored, "region_max_radius_m", atLeast: 1) { o.maxRadiusM = v }
        guard o.minRadiusM <= o.maxRadiusM else {
            throw InputError("region_min_radius_m (\(JSONValue.numberText(o.minRadiusM))) is above region_max_radius_m (\(JSONValue.numberText(o.maxRadiusM)))",
                             field: stored["region_min_radius_m"] != nil ? "region_min_radius_m" : "region_max_radius_m")
        }
        return o
    }
}
