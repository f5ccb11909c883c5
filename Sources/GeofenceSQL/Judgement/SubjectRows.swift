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
/// A fix that takes a subject into many areas at once adds as many
/// gf_inside rows, in as few statements as their count allows
/// (`RowBatches`). Rows go one DELETE each, a lookup of the primary key: a
/// DELETE of a list of areas (`area_id IN (?, …)`) has SQLite build a
/// temporary table of the list first, which cost more than the statements
/// it saved (docs/write-path.md).
final class SubjectRows {
    private let loadRecord, saveRecord: Statement
    private let enterAreas: RowBatches
    private let leaveArea: Statement

    init(_ db: Connection) throws {
        loadRecord = try db.prepare("SELECT record FROM main.gf_subject_state WHERE subject_id = ?")
        saveRecord = try db.prepare("""
            INSERT INTO main.gf_subject_state (subject_id, record) VALUES (?, ?) ON CONFLICT(subject_id) DO UPDATE SET record = excluded.record
            """)
        enterAreas = try RowBatches(db, "INSERT OR FAIL INTO main.gf_inside (area_id, subject_id) VALUES ", columns: 2, tail: " ON CONFLICT DO NOTHING")
        leaveArea = try db.prepare("DELETE FROM main.gf_inside WHERE area_id = ? AND subject_id = ?")
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
        for area in areas {
            try leaveArea.bind(text: area, at: 1)
            try leaveArea.bind(text: subject, at: 2)
            try leaveArea.runBound()
        }
    }

    /// What a record that is not a text is refused with.
    static func notText(_ subject: String) -> InputError {
        InputError("gf_subject_state.record of subject \(Echo.quoted(subject)) is not a text: edited by hand "
                   + "(`geofence reset DB --subject ID` clears it)")
    }
}
