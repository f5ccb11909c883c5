import GeofenceCore

/// Notification conditions in gf_conditions.
public final class ConditionStore {
    let db: Connection
    /// Where the reads find gf_conditions (`CatalogTables`).
    let tables: CatalogTables
    public convenience init(_ db: Connection) { self.init(db, tables: .unqualified) }
    init(_ db: Connection, tables: CatalogTables) { self.db = db; self.tables = tables }

    /// The stored conditions of one area (its rows of gf_condition_rows),
    /// ordered by id; its implied pair (`ImpliedConditions`) is read with the
    /// area's row. Judgement asks this once per area, gf_check at an area's
    /// first touch in its session.
    func stored(area: String) throws -> [ConditionDefinition] {
        let s = try byArea ?? db.prepare("SELECT \(Self.columns) FROM \(tables.conditionRows) WHERE area_id = ? ORDER BY condition_id")
        byArea = s
        try s.bind(text: area, at: 1)
        defer { s.reset() }
        var out: [ConditionDefinition] = []
        while try s.step() { out.append(try Self.condition(s.row)) }
        return out
    }
    private var byArea: Statement?

    /// gf_conditions' columns as the engine reads and writes them, in order.
    enum Column: Int, NamedColumns {
        case condition_id, area_id, timing, dwell_s, weekdays, start_time, end_time, start_date, end_date, renotify_suppress_days, timezone
    }
    static let columns = Column.list

    private var inserter: Statement?

    public func insert(_ c: ConditionDefinition) throws {
        do {
            // Prepared once per store and bound value by value (an import of
            // conditions adds one a line). Into the stored rows: every condition
            // this inserts has its id, which the view's INSTEAD OF trigger would
            // only pass on.
            if inserter == nil { inserter = try db.prepare("INSERT INTO gf_condition_rows (\(Self.columns)) VALUES (?,?,?,?,?,?,?,?,?,?,?)") }
            guard let s = inserter else { return }
            defer { s.reset() }
            try s.bind(integer: c.conditionId, at: 1)
            try s.bind(text: c.areaId, at: 2)
            switch c.timing {
            case .IN: try s.bind(staticText: "IN", at: 3)
            case .OUT: try s.bind(staticText: "OUT", at: 3)
            case .DWELL: try s.bind(staticText: "DWELL", at: 3)
            }
            func bind(_ v: String?, _ at: Int32) throws { if let v { try s.bind(text: v, at: at) } else { try s.bindNull(at: at) } }
            func bind(_ v: Int64?, _ at: Int32) throws { if let v { try s.bind(integer: v, at: at) } else { try s.bindNull(at: at) } }
            try bind(c.dwellSeconds, 4)
            try bind(c.weekdays.map(\.description), 5)
            try bind(c.startMinute.map(ConditionDefinition.formatTime), 6)
            try bind(c.endMinute.map(ConditionDefinition.formatTime), 7)
            try bind(c.startDay.map(ConditionDefinition.formatDate), 8)
            try bind(c.endDay.map(ConditionDefinition.formatDate), 9)
            try bind(c.renotifySuppressDays.map(Int64.init), 10)
            try bind(c.timezone, 11)
            while try s.step() {}
        } catch let e as SQLiteError where e.isRaisedByTrigger && (try? exists("gf_areas", "area_id", .text(c.areaId))) == false {
            // Ids are compared as written: name an area that differs only by spaces
            // at its ends or leading zeros (a spreadsheet's `1` for `00001`), if there is one.
            let near = (try? db.scalar("""
                SELECT area_id FROM gf_areas WHERE area_id <> ?1
                AND (trim(area_id) = trim(?1) OR ltrim(trim(area_id), '0') = ltrim(trim(?1), '0')) LIMIT 1
                """, [.text(c.areaId)]).string) ?? nil
            let hint = near.map { " (area \(Echo.quoted($0)) exists: ids are compared as written, spaces at their ends and leading zeros included)" } ?? ""
            throw InputError("unknown area \(Echo.quoted(c.areaId))\(hint): add the area before its conditions", id: String(c.conditionId), field: "area_id")
        } catch let e as SQLiteError where (e.isRaisedByTrigger || e.isUniqueViolation) && (try? exists("gf_conditions", "condition_id", .integer(c.conditionId))) == true {
            // Taken by a stored row (the primary key) or an implied one (gf_condition_rows_id_free).
            throw InputError("duplicate condition_id: condition \(c.conditionId) exists already, in the catalog or earlier in this input "
                             + "(`geofence conditions list` shows the ids in use; an empty condition_id in a file, or `conditions add` "
                             + "without --id, numbers a new condition after the highest)",
                             id: String(c.conditionId), field: "condition_id")
        }
    }

    /// Whether `table` has a row whose `column` is `value` (what a refused
    /// insert is told apart by: the data, not the error's text).
    private func exists(_ table: StaticString, _ column: StaticString, _ value: SQLiteValue) throws -> Bool {
        try db.scalar("SELECT EXISTS (SELECT 1 FROM \(table) WHERE \(column) = ?)", [value]).int64 == 1
    }

    public func all(area: String? = nil) throws -> [ConditionDefinition] {
        // Only a given filter is written: `?1 IS NULL OR area_id = ?1` would keep SQLite from seeking each part of the view.
        guard let area else { return try read("SELECT \(Self.columns) FROM gf_conditions ORDER BY condition_id", []) }
        return try read("SELECT \(Self.columns) FROM gf_conditions WHERE area_id = ?1 ORDER BY condition_id", [.text(area)])
    }

    public func get(_ id: Int64) throws -> ConditionDefinition? {
        try read("SELECT \(Self.columns) FROM gf_conditions WHERE condition_id = ?", [.integer(id)]).first
    }

    /// The conditions `sql` selects. An area_id that is no UTF-8 text is the
    /// catalog's error naming the condition: shown with its bytes repaired,
    /// it would name another area.
    private func read(_ sql: String, _ values: [SQLiteValue]) throws -> [ConditionDefinition] {
        let s = try db.prepare(sql)
        try s.bind(values)
        var out: [ConditionDefinition] = []
        while try s.step() {
            if s.isMalformedText(Column.area_id.rawValue) {
                throw CatalogError.notUTF8AreaId(s, Column.area_id.rawValue, of: "condition \(s.value(Column.condition_id.rawValue).int64 ?? 0)",
                                                 mend: "give its area a UTF-8 id", remove: "the condition")
            }
            out.append(try Self.condition(s.row))
        }
        return out
    }

    /// Removes condition `id`, through the view (an implied one's pair is
    /// stored first, the other kept); false if there was none. The view's
    /// INSTEAD OF trigger leaves `changes()` at 0, so the row is looked for first.
    @discardableResult
    public func remove(_ id: Int64) throws -> Bool {
        guard try exists("gf_conditions", "condition_id", .integer(id)) else { return false }
        try db.query("DELETE FROM gf_conditions WHERE condition_id = ?", [.integer(id)])
        return true
    }

    /// The id after the highest one; an input error when the highest is
    /// the largest integer SQLite stores (the ids are used up at the top).
    public func nextId() throws -> Int64 { try Self.after(highestId()) }

    /// The highest condition_id, stored or implied, 0 with none: each part's
    /// maximum is a seek of its index (the view's would read every row).
    func highestId() throws -> Int64 {
        let stored = try db.scalar("SELECT max(condition_id) FROM gf_condition_rows").int64 ?? 0
        return max(stored, try ImpliedConditions.highest(db) ?? 0)
    }

    /// `id + 1`, or an input error past the largest id.
    static func after(_ id: Int64) throws -> Int64 {
        let (next, overflow) = id.addingReportingOverflow(1)
        guard !overflow else {
            throw InputError("no condition id is left after \(id), the largest SQLite stores: give new conditions their ids (condition_id)",
                             field: "condition_id")
        }
        return next
    }

    /// A stored row as a condition; a value judging cannot read (written past
    /// the table's CHECK) is the catalog's error, naming the condition and
    /// its column in every door (gf_check shows a catalog error whole).
    static func condition(_ values: [SQLiteValue]) throws -> ConditionDefinition {
        let r = NamedRow<Column>(values)
        do { return try parsed(r) } catch let e as InputError {
            let which = r[.condition_id].int64.map { "condition \($0)" } ?? "a condition of area \(Echo.quoted(r[.area_id].string ?? ""))"
            throw CatalogError(e.located(item: which).description)
        }
    }

    private static func parsed(_ r: NamedRow<Column>) throws -> ConditionDefinition {
        guard let timing = ConditionDefinition.Timing(rawValue: r[.timing].string ?? "") else {
            throw InputError("must be IN, OUT or DWELL, got \(Self.shown(r[.timing]))", field: "timing")
        }
        // The view shows an implied pair's ids as its area's column holds them, checked only by the column's CHECK.
        guard case .integer(let id) = r[.condition_id], id >= 1 else {
            throw InputError("must be a whole number from 1, got \(Self.shown(r[.condition_id])) (of an implied condition: its area's "
                             + "default_condition_id, written past the column's CHECK)", field: "condition_id")
        }
        var c = ConditionDefinition(conditionId: id, areaId: r[.area_id].string ?? "", timing: timing)
        c.dwellSeconds = try Self.integer(r[.dwell_s], field: "dwell_s")
        c.weekdays = try r[.weekdays].text(field: "weekdays").map(Weekdays.parse)
        c.startMinute = try r[.start_time].text(field: "start_time").map { try ConditionDefinition.parseTime($0, field: "start_time") }
        c.endMinute = try r[.end_time].text(field: "end_time").map { try ConditionDefinition.parseTime($0, field: "end_time") }
        c.startDay = try r[.start_date].text(field: "start_date").map { try ConditionDefinition.parseDate($0, field: "start_date") }
        c.endDay = try r[.end_date].text(field: "end_date").map { try ConditionDefinition.parseDate($0, field: "end_date") }
        c.renotifySuppressDays = try Self.integer(r[.renotify_suppress_days], field: "renotify_suppress_days").map(Int.init)
        c.timezone = try r[.timezone].text(field: "timezone")
        return c
    }

    /// A column that holds an integer or NULL. Anything else (text such as
    /// '3 days', a fraction) is refused, not read as none: the table's
    /// CHECK lets it through (in SQLite text compares above every number),
    /// and read as none a suppression or a dwell would silently not apply.
    static func integer(_ v: SQLiteValue, field: String) throws -> Int64? {
        if case .null = v { return nil }
        guard let i = v.int64 else { throw InputError("must be a whole number or empty, got \(shown(v))", field: field) }
        return i
    }

    /// A stored value as an error shows it.
    private static func shown(_ v: SQLiteValue) -> String {
        switch v {
        case .null: "nothing"
        case .text(let t): Echo.quoted(t)
        case .blob: "a BLOB"
        default: v.string ?? ""
        }
    }
}

