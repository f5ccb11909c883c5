import GeofenceCore

/// An area's implied default conditions (schema version 12,
/// sql/012_implied_conditions.sql): its IN has the id in
/// `gf_areas.default_condition_id`, its OUT that id + 1, and neither has
/// anything else set. Every other condition is a row of gf_condition_rows;
/// the view gf_conditions shows both.
///
///     let all = ImpliedConditions.merged(stored, first: 41, area: "A1")   // stored ones and IN 41, OUT 42, by id
///
/// The engine reads the column with the area's row, which it reads anyway,
/// and the stored rows by area: an area with only its default pair costs
/// one seek of an empty range, not two rows read and parsed.
enum ImpliedConditions {
    /// The column of gf_areas, as the engine's reads append it after the area's own.
    static let column = "default_condition_id"

    /// The implied IN's id in `value` (the column as read) of area `area`:
    /// nil for NULL. A value the column's CHECK refuses (written past it) is
    /// the catalog's error, naming the area: read as none, the area's
    /// notifications would silently stop.
    static func first(_ value: SQLiteValue, area: String) throws -> Int64? {
        if case .null = value { return nil }
        guard case .integer(let id) = value, id >= 1, id < Int64.max else {
            throw CatalogError("area \(Echo.quoted(area)) has a default_condition_id that is not an id from 1 to 9223372036854775806 "
                               + "(written past the column's CHECK): set it to NULL or to a free id in SQL")
        }
        return id
    }

    /// The highest implied id (the last pair's OUT), nil with none. The
    /// column's least and greatest values are read from its index (SQLite
    /// orders numbers before text and BLOBs); either outside the ids the
    /// CHECK allows (written past it) is the catalog's error naming its
    /// area: an id given after a wrong maximum could be one an area implies.
    static func highest(_ db: Connection) throws -> Int64? {
        guard let ends = try db.query("""
            SELECT min(default_condition_id), max(default_condition_id) FROM gf_areas WHERE default_condition_id IS NOT NULL
            """).first, let last = try ends.map(checked).last ?? nil else { return nil }
        return last + 1

        func checked(_ end: SQLiteValue) throws -> Int64? {
            if let id = try? first(end, area: "") { return id }
            let area = try db.scalar("SELECT area_id FROM gf_areas WHERE default_condition_id = ? LIMIT 1", [end]).string ?? ""
            return try first(end, area: area)
        }
    }

    /// The pair whose IN has id `first`.
    static func pair(area: String, first: Int64) -> [ConditionDefinition] {
        let (inC, outC) = ConditionDefinition.impliedPair(area: area, first: first)
        return [inC, outC]
    }

    /// Area `a` ready for judgement with its `stored` conditions and the
    /// implied pair whose IN is `first`: made directly when the pair is all
    /// it has (`CatalogDefaults.judgedArea(_:impliedPair:load:)`), the
    /// commonest area, else from the merged list.
    static func judgedArea(_ a: AreaDefinition, stored: [ConditionDefinition], first: Int64?, defaults: CatalogDefaults,
                           load: (String) throws -> TimeZone) rethrows -> JudgedArea {
        if stored.isEmpty, let first { return try defaults.judgedArea(a, impliedPair: first, load: load) }
        return try defaults.judgedArea(a, conditions: merged(stored, first: first, area: a.areaId), load: load)
    }

    /// `stored` (an area's rows, by id) with its implied pair when `first`
    /// is one, by id: the order gf_conditions gives them, in which an area's
    /// notifications for one fix are made.
    static func merged(_ stored: [ConditionDefinition], first: Int64?, area: String) -> [ConditionDefinition] {
        guard let first else { return stored }
        guard !stored.isEmpty else { return pair(area: area, first: first) }
        return (stored + pair(area: area, first: first)).sorted { $0.conditionId < $1.conditionId }
    }
}
