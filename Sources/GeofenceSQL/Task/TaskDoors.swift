import GeofenceCore

/// The state door of a task: the subjects' records as the task was given
/// them (checked and in canonical form, `StateTransfer.check`), and the
/// records the batch leaves, as `StateStore` would store them in a catalog
/// (the last-notified days of suppressing conditions only; none for a
/// subject never judged). So a task's records are, byte for byte, what
/// `geofence state export` gives of a catalog that judged the same fixes.
final class RecordStates: SubjectStateStore {
    /// The canonical record text given for each subject (subjects told
    /// apart by their bytes, as a catalog tells them: `SubjectKey`).
    let given: [SubjectKey: String]
    /// The records saved by the batch, by subject.
    private(set) var saved: [SubjectKey: String] = [:]
    private let suppressing: Set<Int64>

    init(given: [SubjectKey: String], suppressing: Set<Int64>) {
        self.given = given; self.suppressing = suppressing
    }

    /// The subject's state from its given record; an empty state if none was given.
    func load(_ subject: String) throws -> SubjectState {
        guard let text = given[SubjectKey(subject)] else { return SubjectState(subjectId: subject) }
        return try SubjectRecord.decode(text, subject: subject)
    }

    /// Keeps the subject's new record, as a catalog's `StateStore` writes it.
    func save(_ state: SubjectState, before: SubjectState) throws {
        guard let kept = StateStore.stored(state, suppressing: suppressing.contains) else { return }
        saved[SubjectKey(state.subjectId)] = SubjectRecord.encode(kept)
    }

    /// Every subject that was given a record or saved one, in the byte order
    /// of its UTF-8 (export's order), with its record after the batch: the
    /// saved one, else the given one unchanged.
    func records() -> [(subject: String, record: String)] {
        var subjects = Set(given.keys)
        subjects.formUnion(saved.keys)
        return subjects.sorted().map { ($0.id, saved[$0] ?? given[$0]!) }
    }
}

/// The result door of a task: notifications collected in the order the
/// engine hands them over, which is the canonical order (subject by
/// subject, each subject's by time, area_id, condition_id), or handed to a
/// tap in that order instead (`geofence judge --state` writes them out as
/// they come, and keeps none). Explanations are not asked for and not kept.
final class CollectedRun: RunSink {
    private(set) var notifications: [Notification] = []
    private let tap: NotificationTap?

    init(tap: NotificationTap? = nil) { self.tap = tap }

    func checkStillWanted() throws {}
    func willStore(validFixes: Int) throws {}
    func store(_ notifications: [Notification], encoded: [UInt8]?) throws {
        guard let tap else { return self.notifications += notifications }
        try tap.write(notifications, encoded)
    }
    func store(_ explanations: [Explanation]) throws {}
    func finish() throws {}
    var encode: (@Sendable ([Notification]) -> [UInt8]?)? { tap?.encode }
}
