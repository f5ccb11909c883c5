import GeofenceCore

/// The columns of a SELECT, named by an enum whose cases are the column
/// names in the order they are selected: the statement's column list is
/// made from the enum, so a value is read by its name and cannot be read
/// from another column's place.
///
///     enum SubjectColumn: Int, NamedColumns { case last_ts, judged_fixes }
///     let s = try db.prepare("SELECT \(SubjectColumn.list) FROM gf_subjects WHERE subject_id = ?")
///     s.value(SubjectColumn.judged_fixes)          // or, from a row kept: row[.judged_fixes]
///
/// The raw values are the places (0, 1, …, as Swift numbers the cases), so
/// reading by name costs what reading by number does.
protocol NamedColumns: CaseIterable, Hashable, RawRepresentable where RawValue == Int {}

extension NamedColumns {
    /// The cases' names, in order, for a SELECT or INSERT list.
    static var list: String { allCases.map { "\($0)" }.joined(separator: ", ") }

    /// The list with some columns read as another expression (a column
    /// left out as NULL, say); the places stay the same.
    static func list(reading replaced: [Self: String]) -> String {
        allCases.map { replaced[$0] ?? "\($0)" }.joined(separator: ", ")
    }
}

extension Statement {
    /// The current row's value of a named column.
    func value<C: NamedColumns>(_ c: C) -> SQLiteValue { value(c.rawValue) }
}

/// A row read by a SELECT of `C`'s columns (and perhaps more after them),
/// kept to be decoded later or on another thread.
struct NamedRow<C: NamedColumns> {
    let values: [SQLiteValue]
    init(_ values: [SQLiteValue]) { self.values = values }
    subscript(_ c: C) -> SQLiteValue { values[c.rawValue] }
}

/// An R*Tree box as SpatiaLite's index stores it, selected as the four
/// columns of `list` (`xmin, xmax, ymin, ymax`, with the table's alias).
enum RTreeBoxColumns {
    static func list(_ alias: String = "") -> String {
        let p = alias.isEmpty ? "" : alias + "."
        return "\(p)xmin, \(p)xmax, \(p)ymin, \(p)ymax"
    }
}

extension Statement {
    /// The box selected by `RTreeBoxColumns.list` from column `first` on.
    /// A bound that is missing or not a finite number (NULL, an infinity, a
    /// NaN: only a hand edit of the index stores one) reads as the world's
    /// on its side (±180°, ±90°): the box then holds at least what the index
    /// says, and every use of it (a grid's cells, a window's arithmetic)
    /// stays finite.
    func rtreeBox(from first: Int) -> BoundingBox {
        func bound(_ k: Int, world: Double) -> Double {
            guard let v = value(first + k).double, v.isFinite else { return world }
            return v
        }
        return BoundingBox(minLon: bound(0, world: -180), minLat: bound(2, world: -90), maxLon: bound(1, world: 180), maxLat: bound(3, world: 90))
    }
}
