/// Rows of the conditions CSV (`geofence conditions import`) and of
/// `conditions add` options, as text fields by column name.
public enum ConditionText {
    public static let columns = ["condition_id", "area_id", "timing", "dwell_s", "weekdays", "start_time", "end_time",
                                 "start_date", "end_date", "renotify_suppress_days", "timezone"]

    /// Empty or missing fields are unset. Spaces at a field's ends are
    /// dropped, except in the area id, which is as written (a CSV field,
    /// quoted or not, an option's value): ` A` and `A` are two areas a
    /// catalog may hold, and a condition must land on the one named.
    public static func condition(_ f: [String: String]) throws -> ConditionDefinition {
        func get(_ k: String) -> String? { f[k].flatMap { $0.trimmingSpaces.isEmpty ? nil : $0.trimmingSpaces } }
        guard let idText = get("condition_id") else { throw InputError("is required", field: "condition_id") }
        guard let id = Int64(idText) else { throw InputError("must be an integer, got \(Echo.quoted(idText))", field: "condition_id") }
        guard let area = f["area_id"].flatMap({ $0.isEmpty ? nil : $0 }) else { throw InputError("is required", id: idText, field: "area_id") }
        guard let timingText = get("timing"), let timing = ConditionDefinition.Timing(rawValue: timingText.uppercased()) else {
            throw InputError("must be IN, OUT or DWELL, got \(Echo.quoted(f["timing"] ?? ""))", id: idText, field: "timing")
        }
        var c = ConditionDefinition(conditionId: id, areaId: area, timing: timing)
        do {
            if let s = get("dwell_s") {
                guard let v = Int64(s) else { throw InputError("must be whole seconds, got \(Echo.quoted(s))", field: "dwell_s") }
                c.dwellSeconds = v
            }
            c.weekdays = try get("weekdays").map(Weekdays.parse)
            c.startMinute = try get("start_time").map { try ConditionDefinition.parseTime($0, field: "start_time") }
            c.endMinute = try get("end_time").map { try ConditionDefinition.parseTime($0, field: "end_time") }
            c.startDay = try get("start_date").map { try ConditionDefinition.parseDate($0, field: "start_date") }
            c.endDay = try get("end_date").map { try ConditionDefinition.parseDate($0, field: "end_date") }
            if let s = get("renotify_suppress_days") {
                guard let v = Int(s) else { throw InputError("must be whole days, got \(Echo.quoted(s))", field: "renotify_suppress_days") }
                c.renotifySuppressDays = v
            }
            c.timezone = get("timezone")
            try c.validate()
        } catch let e as InputError {
            throw e.located(id: idText)
        }
        return c
    }
}
