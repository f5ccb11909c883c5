import GeofenceCore

/// Subject state in gf_subjects, gf_stay_rows (read as the gf_stays view) and the notifications' local days: loaded and
/// saved one subject at a time, the unit a distributed task would own (the engine's `SubjectStateStore`).
final class StateStore: SubjectStateStore {
    let db: Connection
    private let loadSubject, loadStays, loadNotified: Statement
    private let saveSubject, deleteStay, saveStreaks: Statement
    private let saveStays: RowBatches
    /// Whether any condition has a suppression: asked once per store (a
    /// judgement's life, which ends whenever the catalog changes); without
    /// one no day is read.
    private let anySuppression: Statement
    private var readsDays: Bool?

    init(_ db: Connection) throws {
        self.db = db
        loadSubject = try db.prepare("SELECT \(SubjectColumn.list) FROM gf_subjects WHERE subject_id = ?")
        loadStays = try db.prepare("SELECT \(StayColumn.list) FROM gf_stay_rows WHERE subject_id = ?")
        // Only the days a rule reads: those of conditions with a suppression
        // (behaviour §5), each the day of the condition's latest notification
        // of the subject, the one written last (what the gf_last_notified view
        // shows), read from the subject's rows through their (subject_key, ts_us) index.
        loadNotified = try db.prepare("""
            SELECT n.condition_id, n.local_day, max(n.id) FROM gf_notification_rows AS n
            JOIN gf_conditions AS c ON c.condition_id = n.condition_id AND c.renotify_suppress_days > 0
            WHERE n.subject_key = (SELECT subject_key FROM gf_subject_keys WHERE subject_id = ?)
            GROUP BY n.condition_id
            """)
        anySuppression = try db.prepare("SELECT EXISTS (SELECT 1 FROM gf_conditions WHERE renotify_suppress_days > 0)")
        saveSubject = try db.prepare("""
            INSERT INTO gf_subjects (subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(subject_id) DO UPDATE SET last_ts = excluded.last_ts, last_lat = excluded.last_lat,
                last_lon = excluded.last_lon, last_accuracy_m = excluded.last_accuracy_m, judged_fixes = excluded.judged_fixes
            """)
        deleteStay = try db.prepare("DELETE FROM gf_stay_rows WHERE subject_id = ? AND area_id = ?")
        saveStays = try RowBatches(db, "INSERT OR REPLACE INTO gf_stay_rows (subject_id, area_id, state, in_base, out_base, base_judged, entered_at, dwell_spent) VALUES ",
                                   columns: 8)
        saveStreaks = try db.prepare("UPDATE gf_stay_rows SET in_base = ?3, out_base = ?4, base_judged = ?5 WHERE subject_id = ?1 AND area_id = ?2")
        suppresses = try db.prepare("SELECT renotify_suppress_days > 0 FROM gf_conditions WHERE condition_id = ?")
    }

    private enum SubjectColumn: Int, NamedColumns { case last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes }
    private enum StayColumn: Int, NamedColumns { case area_id, state, in_base, out_base, base_judged, entered_at, dwell_spent }

    /// Whether a condition has a suppression (its notified day is then read by a rule).
    private let suppresses: Statement
    /// Its answers, by condition id. Asked only with `lastLoadTrusted`, whose
    /// store is dropped with its judgement whenever the catalog changes, so
    /// an answer holds for the store's life.
    private var suppressing: [Int64: Bool] = [:]

    /// The states this store saved last, by subject, for
    /// `load(_:trustingLastSave:)`; at most `savedSubjects` of them. Kept
    /// only after a trusting load: a batch never reads them back.
    private var saved: [String: SubjectState] = [:]
    private var lastLoadTrusted = false
    static let savedSubjects = 4_096

    /// Whether `load` may reuse what this store saved last (`load(_:trustingLastSave:)`).
    var trustsLastSave = false

    func load(_ subject: String) throws -> SubjectState { try load(subject, trustingLastSave: trustsLastSave) }

    /// With `trustingLastSave`, a subject whose last fix in the database is
    /// the one this store saved last for it is not read again: one indexed
    /// lookup instead of its stays and notified days (gf_check, on a stream
    /// of fixes of many subjects interleaved in time). The caller vouches that
    /// nothing else wrote the state since, except by rolling back, which the
    /// last fix then shows (every save that changes stays or days also
    /// records a newer last fix).
    func load(_ subject: String, trustingLastSave: Bool) throws -> SubjectState {
        var s = SubjectState(subjectId: subject)
        lastLoadTrusted = trustingLastSave
        try loadSubject.bind([.text(subject)])
        // Reset at once: a statement left on its row holds a read lock (the statement is reused).
        defer { loadSubject.reset() }
        if try loadSubject.step() {
            let row = loadSubject
            let ts = try Self.time(row.value(SubjectColumn.last_ts), "gf_subjects.last_ts", of: subject)
            s.lastFix = Fix(subjectId: subject, ts: ts, lat: row.value(SubjectColumn.last_lat).double ?? 0,
                            lon: row.value(SubjectColumn.last_lon).double ?? 0, accuracy: row.value(SubjectColumn.last_accuracy_m).double ?? 0)
            s.judgedFixes = try Self.count(row.value(SubjectColumn.judged_fixes), "gf_subjects.judged_fixes", of: subject)
        }
        if trustingLastSave, let kept = saved[subject], kept.lastFix == s.lastFix, kept.judgedFixes == s.judgedFixes { return kept }
        try loadStays.bind([.text(subject)])
        while try loadStays.step() {
            // Stays count by their subject's judged fixes (gf_subjects): without it they are no state this engine writes.
            guard let last = s.lastFix?.ts else {
                throw InputError("gf_stay_rows holds stays of subject \(Echo.quoted(subject)), which gf_subjects does not have: "
                                 + "edited by hand (`geofence reset DB --subject ID` clears them)")
            }
            var stored = StayState()
            let row = loadStays
            stored.phase = StayState.Phase(rawValue: row.value(StayColumn.state).string ?? "") ?? .unknown
            stored.inStreak = try Self.count(row.value(StayColumn.in_base), "gf_stay_rows.in_base", of: subject)
            stored.outStreak = try Self.count(row.value(StayColumn.out_base), "gf_stay_rows.out_base", of: subject)
            let entered = row.value(StayColumn.entered_at)
            stored.enteredAt = entered.isNull ? nil : try Self.time(entered, "gf_stay_rows.entered_at", of: subject)
            if let entered = stored.enteredAt, last < entered {
                throw InputError("gf_stay_rows.entered_at of subject \(Echo.quoted(subject)) is \(entered.iso8601), after its last judged fix "
                                 + "(\(last.iso8601)): edited by hand (`geofence reset DB --subject ID` clears it)")
            }
            stored.dwellSpent = (row.value(StayColumn.dwell_spent).string ?? "").split(separator: ",").compactMap { Int64($0) }
            // The row holds the streaks as of its base_judged-th fix (the gf_stays view reads them the same way).
            let base = try Self.count(row.value(StayColumn.base_judged), "gf_stay_rows.base_judged", of: subject)
            // A stay's streaks are counted from a fix the subject has judged: a later one is no state this engine writes.
            guard base <= s.judgedFixes else {
                throw InputError("gf_stay_rows.base_judged of subject \(Echo.quoted(subject)) is \(base), past the \(s.judgedFixes) fixes "
                                 + "gf_subjects says it has judged: the stay rows were edited by hand (`geofence reset DB --subject ID` clears them)")
            }
            s.stays[row.value(StayColumn.area_id).string ?? ""] = stored.continued(by: max(0, s.judgedFixes - base))
        }
        if readsDays == nil {
            try anySuppression.bind([])
            defer { anySuppression.reset() }
            readsDays = try anySuppression.step() && anySuppression.value(0).int64 == 1
        }
        guard readsDays == true else { return s }
        try loadNotified.bind([.text(subject)])
        defer { loadNotified.reset() }
        while try loadNotified.step() {
            if let id = loadNotified.value(0).int64, let day = loadNotified.value(1).int64 { s.lastNotifiedDay[id] = Int(day) }
        }
        return s
    }

    /// A stored count of fixes: 0 to 2^53, which no count this engine writes
    /// comes near; a row edited past it by hand is refused with its place
    /// (sums of such counts could not overflow).
    static func count(_ v: SQLiteValue, _ column: String, of subject: String) throws -> Int {
        guard let n = v.int64 ?? (v.isNull ? 0 : nil), (0...(Int64(1) << 53)).contains(n) else {
            throw InputError("\(column) of subject \(Echo.quoted(subject)) is \(Echo.plain(v.string ?? "a BLOB")), not a count of judged fixes (0 to 2^53)")
        }
        return Int(n)
    }

    /// A stored time, refused with its place when it is not one.
    static func time(_ v: SQLiteValue, _ column: String, of subject: String) throws -> Timestamp {
        do { return try Timestamp.parse(v.string ?? "") } catch {
            throw InputError("\(column) of subject \(Echo.quoted(subject)) is not a time: \(error)")
        }
    }

    /// Writes what `judge` may have changed: `before` is the state as loaded.
    func save(_ s: SubjectState, before: SubjectState) throws {
        saved[s.subjectId] = nil  // set again only once every write has succeeded
        if let f = s.lastFix, f != before.lastFix || s.judgedFixes != before.judgedFixes {
            try saveSubject.run([.text(s.subjectId), .text(f.ts.storageText), .real(f.position.lat), .real(f.position.lon),
                                 .real(f.accuracy), .integer(Int64(s.judgedFixes))])
        }
        // Only what changed: a subject may hold hundreds of stays, few of which a batch touches.
        for area in before.stays.keys where s.stays[area] == nil {
            try deleteStay.run([.text(s.subjectId), .text(area)])
        }
        let judgedSince = s.judgedFixes - before.judgedFixes
        var replaced: [(area: String, stay: StayState)] = []
        for (area, stay) in s.stays {
            let old = before.stays[area]
            // A stay whose streak grew by one at every fix reads right from the
            // row as it is (behaviour §4 counts every inside fix, so a subject
            // staying inside would otherwise rewrite each of its stays per fix).
            if let old, old.continued(by: judgedSince) == stay { continue }
            // A streak broken or restarted: an UPDATE of unindexed columns,
            // not a row (and index entry) replaced, nor its entry time formatted again.
            if let old, old.phase == stay.phase, old.enteredAt == stay.enteredAt, old.dwellSpent == stay.dwellSpent {
                try saveStreaks.run([.text(s.subjectId), .text(area), .integer(Int64(stay.inStreak)), .integer(Int64(stay.outStreak)),
                                     .integer(Int64(s.judgedFixes))])
                continue
            }
            replaced.append((area, stay))
        }
        try saveStays.write(count: replaced.count) { st, i, p in
            let (area, stay) = replaced[i]
            try st.bind(text: s.subjectId, at: p + 1)
            try st.bind(text: area, at: p + 2)
            try st.bind(text: stay.phase.rawValue, at: p + 3)
            try st.bind(integer: Int64(stay.inStreak), at: p + 4)
            try st.bind(integer: Int64(stay.outStreak), at: p + 5)
            try st.bind(integer: Int64(s.judgedFixes), at: p + 6)
            if let t = stay.enteredAt { try st.bind(text: t.storageText, at: p + 7) } else { try st.bindNull(at: p + 7) }
            if stay.dwellSpent.isEmpty { try st.bindNull(at: p + 8) } else { try st.bind(text: stay.dwellSpent.map(String.init).joined(separator: ","), at: p + 8) }
        }
        // The days notified are stored with the notifications (gf_notification_rows.local_day).
        guard lastLoadTrusted else { return }
        // Kept as `load` would read it back: only the days a rule reads, those
        // loaded (of conditions with a suppression) and the new ones of such
        // conditions (each looked up by its id: a call notifies a few).
        var kept = s
        kept.lastNotifiedDay = try s.lastNotifiedDay.filter { id, _ in
            if before.lastNotifiedDay[id] != nil { return true }
            if let known = suppressing[id] { return known }
            try suppresses.bind([.integer(id)])
            defer { suppresses.reset() }
            let answer = try suppresses.step() && suppresses.value(0).int64 == 1
            suppressing[id] = answer
            return answer
        }
        if saved.count >= Self.savedSubjects { saved.removeAll(keepingCapacity: true) }
        saved[s.subjectId] = kept
    }
}
