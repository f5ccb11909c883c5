import GeofenceCore

/// Where a run's notifications and explanations go: gf_notifications and
/// gf_explain, each through one prepared INSERT bound value by value.
///
/// A batch writes one notification row per transition that notifies (over a
/// million for a day of a thousand subjects), so the row's cost is SQLite's
/// own: values that repeat from the row before (the run, the subject, the
/// fix's time when one fix notifies several areas) stay bound, and no array
/// of values is built per row. The rows and their order are the same as one
/// `INSERT … VALUES` per row; a user's triggers on the tables fire for each.
final class RunOutput {
    private let notification, explanation: Statement
    private var run: Int64?
    private var subject: String?
    private var ts: Int64?

    /// Rows per statement of `notifications`: SQLite inserts the rows of
    /// one multi-row VALUES in their order, firing triggers row by row, for
    /// one statement's start and end instead of one per row.
    static let rowsPerStatement = 64
    private let notifications, explanations: Statement

    init(_ db: Connection) throws {
        let columns = "INSERT INTO gf_notifications (run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m) VALUES "
        notification = try db.prepare(columns + "(?, ?, ?, ?, ?, ?, ?, ?, ?)")
        notifications = try db.prepare(columns + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?)", count: Self.rowsPerStatement)
            .joined(separator: ", "))
        let explain = "INSERT INTO gf_explain (run_id, subject_id, ts, area_id, condition_id, kind, reason) VALUES "
        explanation = try db.prepare(explain + "(?, ?, ?, ?, ?, ?, ?)")
        explanations = try db.prepare(explain + Array(repeating: "(?, ?, ?, ?, ?, ?, ?)", count: Self.rowsPerStatement)
            .joined(separator: ", "))
    }

    func write(_ n: Notification, run: Int64) throws {
        let s = notification
        if self.run != run || subject != n.subjectId || ts != n.ts.microseconds {
            // Forgotten first: a failed bind leaves nothing assumed.
            (self.run, subject, ts) = (nil, nil, nil)
            try s.bind(integer: run, at: 1)
            try s.bind(text: n.subjectId, at: 2)
            try s.bind(text: n.ts.storageText, at: 3)
            (self.run, subject, ts) = (run, n.subjectId, n.ts.microseconds)
        }
        try s.bind(integer: n.conditionId, at: 5)
        try s.bind(staticText: Self.transitions[n.transition], at: 6)
        try s.bind(real: n.lat, at: 7)
        try s.bind(real: n.lon, at: 8)
        try s.bind(real: n.accuracy, at: 9)
        // The area id is read in place (not copied) while the row is written.
        try s.withBound(text: n.areaId, at: 4) { try s.runBound() }
    }

    /// Writes `all` in order: as many rows at a time as a statement holds, the rest one by one.
    func write(_ all: [Notification], run: Int64) throws {
        let n = Self.rowsPerStatement, s = notifications
        var start = 0
        while all.count - start >= n {
            for k in 0..<n {
                let row = all[start + k], p = Int32(9 * k)
                try s.bind(integer: run, at: p + 1)
                try s.bind(text: row.subjectId, at: p + 2)
                try s.bind(text: row.ts.storageText, at: p + 3)
                try s.bind(text: row.areaId, at: p + 4)
                try s.bind(integer: row.conditionId, at: p + 5)
                try s.bind(staticText: Self.transitions[row.transition], at: p + 6)
                try s.bind(real: row.lat, at: p + 7)
                try s.bind(real: row.lon, at: p + 8)
                try s.bind(real: row.accuracy, at: p + 9)
            }
            try s.runBound()
            start += n
        }
        for k in start..<all.count { try write(all[k], run: run) }
    }

    private static let transitions: [ConditionDefinition.Timing: StaticString] = [.IN: "IN", .OUT: "OUT", .DWELL: "DWELL"]

    func write(_ e: Explanation, run: Int64) throws {
        try bind(e, run: run, in: explanation, at: 0)
        try explanation.runBound()
    }

    /// Writes `all` in order, as many rows at a time as a statement holds.
    func write(_ all: [Explanation], run: Int64) throws {
        let n = Self.rowsPerStatement
        var start = 0
        while all.count - start >= n {
            for k in 0..<n { try bind(all[start + k], run: run, in: explanations, at: Int32(7 * k)) }
            try explanations.runBound()
            start += n
        }
        for k in start..<all.count { try write(all[k], run: run) }
    }

    private func bind(_ e: Explanation, run: Int64, in s: Statement, at p: Int32) throws {
        try s.bind(integer: run, at: p + 1)
        try s.bind(text: e.subjectId, at: p + 2)
        if e.ts.microseconds == 0 { try s.bindNull(at: p + 3) } else { try s.bind(text: e.ts.storageText, at: p + 3) }
        if let a = e.areaId { try s.bind(text: a, at: p + 4) } else { try s.bindNull(at: p + 4) }
        if let c = e.conditionId { try s.bind(integer: c, at: p + 5) } else { try s.bindNull(at: p + 5) }
        try s.bind(text: e.kind, at: p + 6)
        try s.bind(text: e.reason, at: p + 7)
    }
}
