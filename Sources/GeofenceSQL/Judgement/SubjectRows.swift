import GeofenceCore

/// One subject's stored state as rows: its record in gf_subject_state (the
/// `SubjectRecord` text) and a row of gf_inside per INSIDE stay. Judging
/// (`StateStore`) and export and import (`StateTransfer`) read and write
/// through these statements, so both keep one layout.
///
///     let rows = try SubjectRows(db)
///     let text = try rows.record(of: "u1")     // nil: never judged, or reset
///     try rows.save("u1", record: text)
///     try rows.enter("u1", areas: ["A"])        // A's INSIDE stay begins
///
/// A fix that takes a subject into or out of many areas at once changes as
/// many gf_inside rows: they go in as few statements as their count allows
/// (`RowBatches`; a DELETE by the subject and a list of areas, each a
/// lookup of the primary key).
final class SubjectRows {
    private let loadRecord, saveRecord: Statement
    private let enterAreas: RowBatches
    /// `DELETE … WHERE subject_id = ? AND area_id IN (…)` by the list's length, longest first.
    private let leaveAreas: [(areas: Int, statement: Statement)]

    init(_ db: Connection) throws {
        loadRecord = try db.prepare("SELECT record FROM main.gf_subject_state WHERE subject_id = ?")
        saveRecord = try db.prepare("""
            INSERT INTO main.gf_subject_state (subject_id, record) VALUES (?, ?) ON CONFLICT(subject_id) DO UPDATE SET record = excluded.record
            """)
        enterAreas = try RowBatches(db, "INSERT OR FAIL INTO main.gf_inside (area_id, subject_id) VALUES ", columns: 2, tail: " ON CONFLICT DO NOTHING")
        leaveAreas = try RowBatches.sizes.map { n in
            (n, try db.prepare("DELETE FROM main.gf_inside WHERE subject_id = ? AND area_id IN (\(Array(repeating: "?", count: n).joined(separator: ", ")))"))
        }
    }

    /// The subject's stored record text; nil when it has none. A stored
    /// value that is not text (edited by hand) is refused, naming the subject.
    func record(of subject: String) throws -> String? {
        try loadRecord.bind([.text(subject)])
        // Reset at once: a statement left on its row holds a read lock (the statement is reused).
        defer { loadRecord.reset() }
        guard try loadRecord.step() else { return nil }
        guard case .text(let text) = loadRecord.value(0) else { throw Self.notText(subject) }
        return text
    }

    /// Stores `record` as the subject's record, replacing any.
    func save(_ subject: String, record: String) throws { try saveRecord.run([.text(subject), .text(record)]) }

    /// The subject's stays in `areas` became INSIDE: their gf_inside rows.
    func enter(_ subject: String, areas: [String]) throws {
        try enterAreas.write(count: areas.count) { s, i, p in
            try s.bind(text: areas[i], at: p + 1)
            try s.bind(text: subject, at: p + 2)
        }
    }

    /// The subject's stays in `areas` are no longer INSIDE: their rows go.
    func leave(_ subject: String, areas: [String]) throws {
        try RowBatches.split(areas.count) { tier, start in
            let (n, s) = leaveAreas[tier]
            try s.bind(text: subject, at: 1)
            for k in 0..<n { try s.bind(text: areas[start + k], at: Int32(k + 2)) }
            try s.runBound()
        }
    }

    /// What a record that is not a text is refused with.
    static func notText(_ subject: String) -> InputError {
        InputError("gf_subject_state.record of subject \(Echo.quoted(subject)) is not a text: edited by hand "
                   + "(`geofence reset DB --subject ID` clears it)")
    }
}
