import CArrow
import GeofenceCore
import GeofenceSQL

/// One gf_task_judge call's batches turned into the engine's input, and its
/// output into batches (the column contract is in TaskEntry.swift). Rows
/// are named in errors as the user knows them: the batch, the row (1-based)
/// and, when there is one, the row's order value.
struct TaskCall {
    let fixes: UnsafePointer<ArrowArray>
    let fixesSchema: UnsafePointer<ArrowSchema>
    let states: UnsafePointer<ArrowArray>?
    let statesSchema: UnsafePointer<ArrowSchema>?

    init(fixes: UnsafePointer<ArrowArray>, fixesSchema: UnsafePointer<ArrowSchema>,
         states: UnsafePointer<ArrowArray>?, statesSchema: UnsafePointer<ArrowSchema>?) {
        self.fixes = fixes; self.fixesSchema = fixesSchema; self.states = states; self.statesSchema = statesSchema
    }

    /// A required column, or an error naming the batch and the column.
    private static func required(_ batch: ArrowBatch, _ name: String, _ kinds: [ArrowBatch.Kind]) throws -> ArrowColumn {
        guard let c = try batch.column(name, kinds) else {
            throw InputError("the \(batch.name) batch has no column \(name) (\(ArrowBatch.describe(kinds)))")
        }
        return c
    }

    /// The fixes as rows, in input order: by the `order` column when there
    /// is one (rows of equal order keep their place), else as they come.
    /// A null subject_id or order is refused naming the row; any other bad
    /// value makes the row an invalid fix, counted as `geofence judge` counts it.
    func rows() throws -> [FixRow] {
        let batch = try ArrowBatch(fixes, fixesSchema, name: "fixes")
        let subject = try Self.required(batch, "subject_id", [.text])
        let ts = try Self.required(batch, "ts", [.text, .timestamp])
        let lat = try Self.required(batch, "lat", [.number, .integer])
        let lon = try Self.required(batch, "lon", [.number, .integer])
        let accuracy = try Self.required(batch, "accuracy_m", [.number, .integer])
        let order = try batch.column("order", [.integer])
        func name(_ i: Int) -> String { "fixes row \(i + 1)" + (order?.integer(i).map { " (order \($0))" } ?? "") }
        var sequence = Array(0..<batch.rows)
        if let order {
            for i in sequence where order.isNull(i) { throw InputError("\(name(i)): order is null; every row needs its order") }
            let keys = sequence.map { order.integer($0)! }
            if zip(keys, keys.dropFirst()).contains(where: { $0 > $1 }) {
                sequence.sort { keys[$0] != keys[$1] ? keys[$0] < keys[$1] : $0 < $1 }
            }
        }
        var rows: [FixRow] = []
        rows.reserveCapacity(batch.rows)
        for i in sequence {
            guard let id = try utf8(subject, i, "subject_id", name(i)) else {
                throw InputError("\(name(i)): subject_id is null; every fix needs its subject")
            }
            var row = FixRow(subjectId: id, ts: ts.kind == .text ? try utf8(ts, i, "ts", name(i)) : nil,
                             lat: lat.number(i), lon: lon.number(i), accuracy: accuracy.number(i))
            if ts.kind == .timestamp, let us = ts.microseconds(i) { row.parsedTs = Timestamp(microseconds: us) }
            if ts.kind == .timestamp, !ts.isNull(i), row.parsedTs == nil { (row.problem, row.problemField) = ("ts is out of range", .ts) }
            rows.append(row)
        }
        return rows
    }

    /// The text of `column` at row `i`, refused naming `row` and the column
    /// when its bytes are not UTF-8.
    private func utf8(_ column: ArrowColumn, _ i: Int, _ columnName: String, _ row: String) throws -> String? {
        do { return try column.text(i) } catch is ArrowColumn.NotUTF8 {
            throw InputError("\(row): \(columnName) is not valid UTF-8")
        }
    }

    /// The given state records, checked, by subject (`TaskJudgement.checkedStates`).
    func records() throws -> [SubjectKey: String] {
        guard let states, let statesSchema else { return [:] }
        let batch = try ArrowBatch(states, statesSchema, name: "states")
        let subject = try Self.required(batch, "subject_id", [.text])
        let record = try Self.required(batch, "record", [.text])
        var list: [(subject: String, record: String)] = []
        list.reserveCapacity(batch.rows)
        for i in 0..<batch.rows {
            guard let id = try utf8(subject, i, "subject_id", "states row \(i + 1)") else { throw InputError("states row \(i + 1): subject_id is null") }
            guard let text = try utf8(record, i, "record", "states row \(i + 1)") else {
                throw InputError("states row \(i + 1): the record of subject \(Echo.quoted(id)) is null")
            }
            list.append((id, text))
        }
        return try TaskJudgement.checkedStates(list) { "states row \($0 + 1)" }
    }

    /// The notifications as a batch of gf_notifications' columns (without id and run_id).
    static func export(_ all: [GeofenceCore.Notification], into a: UnsafeMutablePointer<ArrowArray>,
                       _ s: UnsafeMutablePointer<ArrowSchema>) throws {
        var b = ArrowBuilder()
        try b.add("subject_id", texts: all.map(\.subjectId))
        try b.add("ts", texts: all.map(\.ts.storageText))
        try b.add("area_id", texts: all.map(\.areaId))
        try b.add("condition_id", integers: all.map(\.conditionId))
        try b.add("transition", texts: all.map(\.transition.rawValue))
        try b.add("lat", numbers: all.map(\.lat))
        try b.add("lon", numbers: all.map(\.lon))
        try b.add("accuracy_m", numbers: all.map(\.accuracy))
        b.export(into: a, s)
    }

    /// The records as a batch of subject_id, record.
    static func export(_ all: [(subject: String, record: String)], into a: UnsafeMutablePointer<ArrowArray>,
                       _ s: UnsafeMutablePointer<ArrowSchema>) throws {
        var b = ArrowBuilder()
        try b.add("subject_id", texts: all.map(\.subject))
        try b.add("record", texts: all.map(\.record))
        b.export(into: a, s)
    }
}
