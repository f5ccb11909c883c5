import GeofenceCore

/// Portable per-subject state (docs/state.md): a subject's record taken out
/// of a catalog as stored, and a record put into one with gf_inside kept in
/// step with its INSIDE stays. `geofence state export|import` and the SQL
/// functions gf_state_export / gf_state_import all go through here, so every
/// door reads, checks and writes a record the same way.
///
///     let transfer = try StateTransfer(conn)
///     try transfer.forEach(only: nil) { subject, text in … }        // subject_id byte order
///     let checked = try StateTransfer.check(subject: "u1", record: value)
///     guard try transfer.put(checked, replace: false) else { … }     // u1 has state already
///
/// A record is checked whole before anything of it is written (`check`:
/// `SubjectRecord.decode`) and stored in canonical form (the encoding of what
/// it decodes to), so the catalog holds the bytes the engine would have
/// written for that state. Nothing is checked against the catalog: a stay of
/// an area it lacks and a day of a condition it lacks are kept as they are,
/// as for an area removed after the record was written (the stay is hidden
/// by gf_stays, and both leave the record at the subject's next judged fix).
/// A transfer writes through the caller's transaction: the CLI's one for a
/// whole file, `CallTransaction` for one SQL call.
public final class StateTransfer {
    /// One record ready to be put: its subject, its canonical text, and the
    /// areas of its INSIDE stays (gf_inside's rows for it).
    public struct Checked {
        public let subject: String
        public let text: String
        let insideAreas: [String]
    }

    private let db: Connection
    private let rows: SubjectRows

    public init(_ db: Connection) throws {
        self.db = db
        rows = try SubjectRows(db)
    }

    /// The subject's stored record text, nil when it has none (never judged,
    /// or reset). A stored value that is not text is refused, naming the subject.
    public func record(of subject: String) throws -> String? { try rows.record(of: subject) }

    /// Calls `body` with each subject that has a record and its stored text,
    /// in the byte order of the subject_id's UTF-8 (the table's key order,
    /// SQLite's BINARY collation); only the `only` subjects when given (each
    /// once, the ones without a record left out).
    public func forEach(only: [String]?, _ body: (String, String) throws -> Void) throws {
        if let only {
            // Each id once by its bytes (two ids Swift takes for equal are two subjects).
            for subject in Set(only.map(SubjectKey.init)).sorted().map(\.id) {
                if let text = try record(of: subject) { try body(subject, text) }
            }
            return
        }
        let all = try db.prepare("SELECT subject_id, record FROM main.gf_subject_state ORDER BY subject_id")
        while try all.step() {
            guard case .text(let subject) = all.value(0) else { continue }
            guard case .text(let text) = all.value(1) else { throw SubjectRows.notText(subject) }
            try body(subject, text)
        }
    }

    /// `record` (a parsed JSON value) checked as `subject`'s state: a
    /// subject_id as a fix may have one (non-empty, no NUL character) and a
    /// record this engine writes (`SubjectRecord.decode`: version, types,
    /// counts within 0…2^53, finite coordinates in range, times, …) for a
    /// subject judged at least once (`last` not null). Throws
    /// `InputError` naming the subject and what is wrong; writes nothing.
    public static func check(subject: String, record: JSONValue) throws -> Checked {
        try checkId(subject)
        return try checked(subject, try SubjectRecord.decode(value: record, subject: subject, stored: false))
    }

    /// `check(subject:record:)` for a record given as text (gf_state_import's argument).
    public static func check(subject: String, text: String) throws -> Checked {
        try checkId(subject)
        return try checked(subject, try SubjectRecord.decode(text, subject: subject, stored: false))
    }

    private static func checkId(_ subject: String) throws {
        guard !subject.isEmpty else { throw InputError("the subject_id is empty: a subject needs an id") }
        guard !subject.utf8.contains(0) else {
            throw InputError("the subject_id \(Echo.quoted(subject)) holds a NUL character (U+0000), which no subject_id may hold")
        }
    }

    private static func checked(_ subject: String, _ state: SubjectState) throws -> Checked {
        // The engine stores no record for a subject it never judged (export has no line for one).
        guard state.lastFix != nil else {
            throw InputError("the state record of subject \(Echo.quoted(subject)) has \"last\" null, the state of a subject never "
                             + "judged, which a catalog does not store: leave the subject out")
        }
        let inside = state.stays.filter { $0.1.phase == .inside }.map(\.0)
        return Checked(subject: subject, text: SubjectRecord.encode(state), insideAreas: inside)
    }

    /// Stores a checked record as its subject's state, with gf_inside's rows
    /// for its INSIDE stays. A subject that has state already is left as it
    /// is and false returned, unless `replace`: then its record and its
    /// gf_inside rows are replaced. Counters (`judged`) are taken as they are.
    @discardableResult
    public func put(_ c: Checked, replace: Bool) throws -> Bool {
        if let old = try record(of: c.subject) {
            guard replace else { return false }
            try removeInside(of: c.subject, record: old)
        }
        try rows.save(c.subject, record: c.text)
        try rows.enter(c.subject, areas: c.insideAreas)
        return true
    }

    /// Deletes the gf_inside rows of the subject whose stored record is
    /// `old`: those of its INSIDE stays, found by key. A record that does not
    /// read (edited by hand) names none, so then every row of the subject is
    /// deleted, by a scan of gf_inside (keyed by area first).
    private func removeInside(of subject: String, record old: String) throws {
        let state: SubjectState
        do { state = try SubjectRecord.decode(old, subject: subject) } catch is InputError {
            try db.query("DELETE FROM main.gf_inside WHERE subject_id = ?", [.text(subject)])
            return
        }
        try rows.leave(subject, areas: state.stays.filter { $0.1.phase == .inside }.map(\.0))
    }
}
