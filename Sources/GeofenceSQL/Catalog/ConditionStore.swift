import GeofenceCore

/// Notification conditions in gf_conditions.
public final class ConditionStore {
    let db: Connection
    private let statements: StatementCache
    public init(_ db: Connection) { self.db = db; statements = StatementCache(db) }

    /// The conditions of one area, ordered by id (judgement asks this once per area).
    public func of(area: String) throws -> [ConditionDefinition] {
        let s = try statements.get("SELECT \(Self.columns) FROM gf_conditions WHERE area_id = ? ORDER BY condition_id")
        try s.bind([.text(area)])
        var out: [ConditionDefinition] = []
        while try s.step() { out.append(try Self.condition(s.row)) }
        return out
    }

    static let columns = "condition_id, area_id, timing, dwell_s, weekdays, start_time, end_time, start_date, end_date, renotify_suppress_days, timezone"

    public func insert(_ c: ConditionDefinition) throws {
        do {
            // Prepared once per store: an import adds two conditions per area.
            try statements.get("INSERT INTO gf_conditions (\(Self.columns)) VALUES (?,?,?,?,?,?,?,?,?,?,?)").run(Self.values(c))
        } catch let e as SQLiteError where e.message.contains("area_id does not name an area") {
            throw InputError("unknown area \(Echo.quoted(c.areaId)): add the area before its conditions", id: String(c.conditionId), field: "area_id")
        } catch let e as SQLiteError where e.message.contains("UNIQUE constraint failed") {
            throw InputError("duplicate condition_id", id: String(c.conditionId), field: "condition_id")
        }
    }

    static func values(_ c: ConditionDefinition) -> [SQLiteValue] {
        [
            .integer(c.conditionId), .text(c.areaId), .text(c.timing.rawValue), c.dwellSeconds.sqlValue,
            c.weekdays.map { .text($0.description) } ?? .null,
            c.startMinute.map { .text(ConditionDefinition.formatTime($0)) } ?? .null,
            c.endMinute.map { .text(ConditionDefinition.formatTime($0)) } ?? .null,
            c.startDay.map { .text(ConditionDefinition.formatDate($0)) } ?? .null,
            c.endDay.map { .text(ConditionDefinition.formatDate($0)) } ?? .null,
            c.renotifySuppressDays.sqlValue, c.timezone.sqlValue,
        ]
    }

    public func all(area: String? = nil) throws -> [ConditionDefinition] {
        // Only a given filter is written: `?1 IS NULL OR area_id = ?1` would keep SQLite from gf_conditions_by_area.
        guard let area else { return try db.query("SELECT \(Self.columns) FROM gf_conditions ORDER BY condition_id").map(Self.condition) }
        return try db.query("SELECT \(Self.columns) FROM gf_conditions WHERE area_id = ?1 ORDER BY condition_id", [.text(area)])
            .map(Self.condition)
    }

    public func get(_ id: Int64) throws -> ConditionDefinition? {
        try db.query("SELECT \(Self.columns) FROM gf_conditions WHERE condition_id = ?", [.integer(id)]).first.map(Self.condition)
    }

    @discardableResult
    public func remove(_ id: Int64) throws -> Bool {
        try db.query("DELETE FROM gf_conditions WHERE condition_id = ?", [.integer(id)])
        return db.changes > 0
    }

    /// The id after the highest one; an input error when the highest is
    /// the largest integer SQLite stores (the ids are used up at the top).
    public func nextId() throws -> Int64 { try Self.after(highestId()) }

    /// The highest condition_id, 0 with none.
    func highestId() throws -> Int64 { try db.scalar("SELECT max(condition_id) FROM gf_conditions").int64 ?? 0 }

    /// `id + 1`, or an input error past the largest id.
    static func after(_ id: Int64) throws -> Int64 {
        let (next, overflow) = id.addingReportingOverflow(1)
        guard !overflow else {
            throw InputError("no condition id is left after \(id), the largest SQLite stores: give new conditions their ids (condition_id)",
                             field: "condition_id")
        }
        return next
    }

    static func condition(_ r: [SQLiteValue]) throws -> ConditionDefinition {
        let timing = ConditionDefinition.Timing(rawValue: r[2].string ?? "") ?? .IN
        var c = ConditionDefinition(conditionId: r[0].int64 ?? 0, areaId: r[1].string ?? "", timing: timing)
        c.dwellSeconds = r[3].int64
        c.weekdays = try r[4].string.map(Weekdays.parse)
        c.startMinute = try r[5].string.map { try ConditionDefinition.parseTime($0, field: "start_time") }
        c.endMinute = try r[6].string.map { try ConditionDefinition.parseTime($0, field: "end_time") }
        c.startDay = try r[7].string.map { try ConditionDefinition.parseDate($0, field: "start_date") }
        c.endDay = try r[8].string.map { try ConditionDefinition.parseDate($0, field: "end_date") }
        c.renotifySuppressDays = r[9].int64.map(Int.init)
        c.timezone = r[10].string
        return c
    }
}

