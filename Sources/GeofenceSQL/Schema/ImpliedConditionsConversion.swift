/// Schema version 12's conversion (sql/012_implied_conditions.sql): each
/// area's stored default pair becomes its implied one.
///
///     -- before: gf_conditions rows (41, 'A1', 'IN', NULL, …) and (42, 'A1', 'OUT', NULL, …)
///     -- after:  gf_areas.default_condition_id = 41 for 'A1'; no row; the view shows both
///
/// A pair is an IN and the OUT of the next id, of the same area, with every
/// other column NULL: exactly what the view shows for an implied pair, so
/// gf_conditions reads the same values before and after, ids included. An
/// area with several such pairs keeps its first (lowest ids) implied and
/// the others as rows. Every row that is not implied moves to
/// gf_condition_rows as it is. SQL alone, in the upgrade's transaction; it
/// is a conversion only so that `Schema.open` refuses a catalog whose own
/// triggers or indexes on gf_conditions the view would lose.
enum ImpliedConditionsConversion: SchemaConversion {
    static var replacedTables: [ReplacedTable] {
        [ReplacedTable(name: "gf_conditions", replacement: "gf_conditions becomes a view with the same columns and values; "
                       + "the conditions that are not an area's default pair are rows of gf_condition_rows, where a trigger "
                       + "or an index of yours can go, and a trigger on the view must be INSTEAD OF")]
    }

    static func convert(_ db: Connection) throws {
        let columns = ConditionStore.Column.allCases.map { "\($0)" }
        let extra = try db.query("SELECT name FROM pragma_table_info('gf_conditions')").compactMap { $0[0].string }.filter { !columns.contains($0) }
        // A foreign key can name a table only: one naming gf_conditions would fail every write of its table.
        let referring = try db.query("""
            SELECT DISTINCT m.name FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS f
            WHERE m.type = 'table' AND lower(f."table") = 'gf_conditions' ORDER BY 1
            """).compactMap { $0[0].string }
        var found: [String] = []
        if !extra.isEmpty { found.append("columns of yours in it (\(extra.joined(separator: ", ")))") }
        if !referring.isEmpty { found.append("foreign keys of yours naming it, in \(referring.joined(separator: ", "))") }
        guard found.isEmpty else {
            throw CatalogError("the catalog needs upgrading to schema version 12, where gf_conditions becomes a view with the engine's "
                               + "columns, and it has " + found.joined(separator: " and ") + ", which a view would break. Nothing was "
                               + "changed: copy the columns elsewhere and drop them, make the foreign keys name gf_condition_rows "
                               + "(the conditions that are not an area's default pair) or drop them, then open the catalog again")
        }
        let plain = { (c: String) in
            ["dwell_s", "weekdays", "start_time", "end_time", "start_date", "end_date", "renotify_suppress_days", "timezone"]
                .map { "\(c).\($0) IS NULL" }.joined(separator: " AND ")
        }
        try db.execute("""
            UPDATE gf_areas SET default_condition_id = (
                SELECT i.condition_id FROM gf_conditions AS i JOIN gf_conditions AS o ON o.condition_id = i.condition_id + 1
                WHERE i.area_id = gf_areas.area_id AND i.timing = 'IN' AND o.area_id = i.area_id AND o.timing = 'OUT'
                  AND \(plain("i")) AND \(plain("o"))
                ORDER BY i.condition_id LIMIT 1)
            WHERE EXISTS (SELECT 1 FROM gf_conditions AS c WHERE c.area_id = gf_areas.area_id);
            INSERT INTO gf_condition_rows (\(ConditionStore.columns)) SELECT \(ConditionStore.columns) FROM gf_conditions AS c
            WHERE NOT EXISTS (SELECT 1 FROM gf_areas AS a WHERE a.default_condition_id BETWEEN c.condition_id - 1 AND c.condition_id)
            ORDER BY c.condition_id;
            DROP TABLE gf_conditions;
            """)
    }
}
