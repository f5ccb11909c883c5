import GeofenceCore

/// One subject's stored state as rows: its record in gf_subject_state (the
/// `SubjectRecord` text) and a row of gf_inside per INSIDE stay. Judging
/// (`StateStore`) and export and import (`StateTransfer`) read and write
/// through these statements, so both keep one layout.
///
///     let rows = try SubjectRows(db)
///     let text = try rows.record(of: "u1")     // nil: never judged, or reset
///     try rows.save("u1", record: text)
///     try rows.enter("u1", area: "A")           // A's INSIDE stay begins
final class SubjectRows {
    private let loadRecord, saveRecord, enterArea, leaveArea: Statement

    init(_ db: Connection) throws {
        loadRecord = try db.prepare("SELECT record FROM gf_subject_state WHERE subject_id = ?")
        saveRecord = try db.prepare("""
            INSERT INTO gf_subject_state (subject_id, record) VALUES (?, ?) ON CONFLICT(subject_id) DO UPDATE SET record = excluded.record
            """)
        enterArea = try db.prepare("INSERT INTO gf_inside (area_id, subject_id) VALUES (?, ?) ON CONFLICT DO NOTHING")
        leaveArea = try db.prepare("DELETE FROM gf_inside WHERE area_id = ? AND subject_id = ?")
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

    /// The subject's stay in `area` became INSIDE: its gf_inside row.
    func enter(_ subject: String, area: String) throws { try enterArea.run([.text(area), .text(subject)]) }

    /// The subject's stay in `area` is no longer INSIDE: its row goes.
    func leave(_ subject: String, area: String) throws { try leaveArea.run([.text(area), .text(subject)]) }

    /// What a record that is not a text is refused with.
    static func notText(_ subject: String) -> InputError {
        InputError("gf_subject_state.record of subject \(Echo.quoted(subject)) is not a text: edited by hand "
                   + "(`geofence reset DB --subject ID` clears it)")
    }
}
