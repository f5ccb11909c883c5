import GeofenceCore

/// Subject state as one record per subject (gf_subject_state, the
/// `SubjectRecord` text, docs/subject-record.md) and the INSIDE stays by area
/// (gf_inside): loaded and saved one subject at a time, the unit a
/// distributed task would own (the engine's `SubjectStateStore`). A subject
/// costs one row read when loaded and one row written when its state
/// changed; gf_inside is written only when a stay starts or ends being INSIDE.
/// gf_subjects and gf_stays are views over the records (sql/008_subject_records.sql).
final class StateStore: SubjectStateStore {
    let db: Connection
    private let rows: SubjectRows

    /// The conditions with a suppression (behaviour §5): the only ones whose
    /// last-notified day a rule reads, so the only ones a record keeps. Asked
    /// per condition a state holds a day of (`SuppressingConditions`): a
    /// store lives as long as its judgement, which is dropped whenever the
    /// catalog (its conditions) changes.
    let suppressing: SuppressingConditions

    init(_ db: Connection) throws {
        self.db = db
        rows = try SubjectRows(db)
        suppressing = try SuppressingConditions(db)
    }

    /// The states this store saved last, with their record text, by subject,
    /// for `load(_:trustingLastSave:)`, and for the next save of the subject
    /// to copy its unchanged stays from (`SubjectRecord.encoded(_:reusing:)`);
    /// at most `savedSubjects` of them. Kept only after a trusting load: a
    /// batch never reads them back.
    private var saved: [SubjectKey: EncodedRecord] = [:]
    private var lastLoadTrusted = false
    /// The subject `load` read last and its record's text (nil: it had none),
    /// so that a save that changes nothing can still be remembered for trust.
    private var lastLoaded: (subject: String, text: String?)?
    static let savedSubjects = 4_096

    /// Whether `load` may reuse what this store saved last (`load(_:trustingLastSave:)`).
    var trustsLastSave = false

    /// The subject's state, trusting the last save as `trustsLastSave` says (the engine's door).
    func load(_ subject: String) throws -> SubjectState { try load(subject, trustingLastSave: trustsLastSave) }

    /// The subject's state from its record (an empty state if it has none);
    /// a record that is not one this engine writes is refused with the
    /// subject named (`SubjectRecord.decode`). With `trustingLastSave`, a
    /// record whose text is the one this store saved last for the subject is
    /// not decoded again (gf_check, on a stream of fixes of many subjects
    /// interleaved in time): any other write since, or the rollback of that
    /// save, shows as another text.
    func load(_ subject: String, trustingLastSave: Bool) throws -> SubjectState {
        lastLoadTrusted = trustingLastSave
        guard let text = try rows.record(of: subject) else {
            lastLoaded = (subject, nil)
            return SubjectState(subjectId: subject)
        }
        lastLoaded = (subject, text)
        // Subjects and texts compared by their bytes: two ids (or records) Swift takes for equal are two.
        if trustingLastSave, let kept = saved[SubjectKey(subject)], kept.text.hasSameUTF8(as: text) { return kept.state }
        return try SubjectRecord.decode(text, subject: subject)
    }

    /// Writes the subject's record if `judge` changed the state (`before` is
    /// the state as loaded), keeping the last-notified days of suppressing
    /// conditions only, and its gf_inside rows for the stays that started or
    /// ended being INSIDE.
    func save(_ s: SubjectState, before: SubjectState) throws {
        // Set again only once every write has succeeded.
        let previous = saved.removeValue(forKey: SubjectKey(s.subjectId))
        guard let kept = try Self.stored(s, suppressing: suppressing.contains) else { return }
        var record: EncodedRecord?
        if kept != before {
            let written = SubjectRecord.encoded(kept, reusing: previous)
            try rows.save(s.subjectId, record: written.text)
            try updateInside(s, before: before)
            record = written
        } else if let loaded = lastLoaded, loaded.subject.hasSameUTF8(as: s.subjectId), let text = loaded.text {
            record = previous.flatMap { $0.text.hasSameUTF8(as: text) ? $0 : nil } ?? EncodedRecord(readBack: text, state: kept)
        }
        guard lastLoadTrusted, let record else { return }
        if saved.count >= Self.savedSubjects { saved.removeAll(keepingCapacity: true) }
        saved[SubjectKey(s.subjectId)] = record
    }

    /// What of `s` a stored record keeps: the last-notified days of the
    /// conditions `suppressing` says have a suppression (no rule reads
    /// another's); nil for a subject never judged, which has nothing to
    /// store (no record has a stay without a last fix). Every door that
    /// stores records keeps this rule, so the same state gives the same
    /// bytes (`RecordStates` too).
    static func stored(_ s: SubjectState, suppressing: (Int64) throws -> Bool) rethrows -> SubjectState? {
        guard s.lastFix != nil else { return nil }
        var kept = s
        kept.lastNotifiedDay = try s.lastNotifiedDay.filter { try suppressing($0.key) }
        return kept
    }

    /// gf_inside's rows of this subject: one removed per stay no longer
    /// INSIDE (or gone), one added per stay newly INSIDE (`SubjectRows`).
    /// Both maps are in
    /// the byte order of their area_ids (SQLite's), so they are walked side
    /// by side, by index (no stay copied, no lookup by id), comparing ids as
    /// bytes: Swift's `<` and `==` would take "é" and "e\u{301}", two areas
    /// to SQLite, for one.
    private func updateInside(_ s: SubjectState, before: SubjectState) throws {
        let old = before.stays, new = s.stays
        var left: [String] = [], entered: [String] = []
        var i = 0, k = 0
        while i < old.count || k < new.count {
            // Only in the old map, only in the new one, or (neither) in both.
            var onlyOld = k == new.count, onlyNew = i == old.count
            if !onlyOld && !onlyNew {
                let a = old.key(at: i), b = new.key(at: k)
                onlyOld = a.utf8Precedes(b)
                onlyNew = b.utf8Precedes(a)
            }
            let was = !onlyNew && old[at: i].phase == .inside
            let now = !onlyOld && new[at: k].phase == .inside
            if was && !now { left.append(old.key(at: i)) }
            if now && !was { entered.append(new.key(at: k)) }
            if !onlyNew { i += 1 }
            if !onlyOld { k += 1 }
        }
        try rows.leave(s.subjectId, areas: left)
        try rows.enter(s.subjectId, areas: entered)
    }
}
