import GeofenceCore

/// Where a run's notifications and explanations go (the engine's `RunSink`):
/// gf_notifications and gf_explain, as few multi-row INSERTs as the rows
/// allow (`RowBatches`), and a copy to the `NotificationTap` if there is one.
///
/// A batch writes one notification row per transition that notifies (over a
/// million for a day of a thousand subjects), and one gf_check call may
/// write dozens, so the row's cost is SQLite's own: values are bound one by
/// one, with no array of values built per row. The rows and their order are
/// the same as one `INSERT … VALUES` per row; a user's triggers on the
/// tables fire for each.
final class RunOutput: RunSink {
    private let db: Connection
    private let notifications, explanations: RowBatches
    /// The run the rows belong to (gf_runs.run_id; 0 for gf_check's calls, which record no run).
    var runId: Int64 = 0
    /// A copy of the notifications for a caller that also writes them elsewhere.
    var tap: NotificationTap?
    /// A batch of at least this many valid fixes into an empty
    /// gf_notifications builds its index at the end (`DeferredIndex`).
    var deferIndexFixes = 10_000
    private var deferredIndex: DeferredIndex?

    init(_ db: Connection) throws {
        self.db = db
        notifications = try RowBatches(db, "INSERT INTO gf_notifications (run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m) VALUES ",
                                       columns: 9)
        explanations = try RowBatches(db, "INSERT INTO gf_explain (run_id, subject_id, ts, area_id, condition_id, kind, reason, lat, lon) VALUES ",
                                      columns: 9)
    }

    /// A requested interruption (a signal) stops a batch while its fixes are read.
    func checkStillWanted() throws {
        if Interruption.isRequested { throw Interruption.error(nil) }
    }

    func willStore(validFixes: Int) throws {
        if validFixes >= deferIndexFixes { deferredIndex = try DeferredIndex.dropIfUnseen(db) }
    }

    func store(_ notifications: [Notification], encoded: [UInt8]?) throws {
        try write(notifications)
        try tap?.write(notifications, encoded)
    }

    func store(_ explanations: [Explanation]) throws { try write(explanations) }

    func finish() throws {
        try deferredIndex?.restore()
        deferredIndex = nil
    }

    var encode: (@Sendable ([Notification]) -> [UInt8]?)? { tap?.encode }

    /// Writes `all` in order.
    private func write(_ all: [Notification]) throws {
        try notifications.write(count: all.count) { s, i, p in
            let row = all[i]
            try s.bind(integer: runId, at: p + 1)
            try s.bind(text: row.subjectId, at: p + 2)
            try s.bind(text: row.ts.storageText, at: p + 3)
            try s.bind(text: row.areaId, at: p + 4)
            try s.bind(integer: row.conditionId, at: p + 5)
            try s.bind(staticText: Self.transitions[row.transition], at: p + 6)
            try s.bind(real: row.lat, at: p + 7)
            try s.bind(real: row.lon, at: p + 8)
            try s.bind(real: row.accuracy, at: p + 9)
        }
    }

    private static let transitions: [ConditionDefinition.Timing: StaticString] = [.IN: "IN", .OUT: "OUT", .DWELL: "DWELL"]

    /// Writes `all` in order, each with its fix's position (NULL where it has none).
    private func write(_ all: [Explanation]) throws {
        try explanations.write(count: all.count) { s, i, p in
            let e = all[i]
            try s.bind(integer: runId, at: p + 1)
            try s.bind(text: e.subjectId, at: p + 2)
            if e.ts.microseconds == 0 { try s.bindNull(at: p + 3) } else { try s.bind(text: e.ts.storageText, at: p + 3) }
            if let a = e.areaId { try s.bind(text: a, at: p + 4) } else { try s.bindNull(at: p + 4) }
            if let c = e.conditionId { try s.bind(integer: c, at: p + 5) } else { try s.bindNull(at: p + 5) }
            try s.bind(text: e.kind, at: p + 6)
            try s.bind(text: e.reason, at: p + 7)
            if let lat = e.lat { try s.bind(real: lat, at: p + 8) } else { try s.bindNull(at: p + 8) }
            if let lon = e.lon { try s.bind(real: lon, at: p + 9) } else { try s.bindNull(at: p + 9) }
        }
    }
}
