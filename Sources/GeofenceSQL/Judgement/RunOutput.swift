import CSQLite
import GeofenceCore

/// Where a gf_check call began, as to changes not its own that may be
/// pending, to be undone later (`RunOutput.begin`, set by `CallTransaction`).
public enum CallStart: Sendable {
    /// No write transaction open on main, no statement writing.
    case clean
    /// Inside a write transaction already open on main: the caller's, or earlier calls' in it.
    case insideWriteTransaction
    /// Inside a statement that writes (`INSERT … SELECT gf_check(…)` in autocommit).
    case insideWritingStatement
}

/// Where a run's notifications and explanations go (the engine's `RunSink`):
/// gf_notification_rows (read as the gf_notifications view) and gf_explain,
/// as few multi-row INSERTs as the rows allow (`RowBatches`), and a copy to
/// the `NotificationTap` if there is one.
///
/// A batch writes one notification row per transition that notifies (over a
/// million for a day of a thousand subjects), and one gf_check call may
/// write dozens, so the row's cost is SQLite's own: narrow integer rows
/// (subject and area by key, `OutputKeys`; the time in microseconds; the
/// transition 0/1/2), values bound one by one, with no array of values built
/// per row. The rows and their order are the same as one `INSERT … VALUES`
/// per row. Every table is named in `main` (as `SubjectRows` names the
/// state's): SQLite looks in `temp` first, so a TEMP table of the same name
/// on the caller's connection would take the rows, and notifications stored
/// under its keys would name nothing in main's views.
final class RunOutput: RunSink {
    private let notifications, explanations: RowBatches
    /// One notification row with its id given (`NotificationIds`: the newest rows were deleted).
    private let notificationWithId: Statement
    private let ids: NotificationIds
    /// Whether a trigger of the user's may delete notification rows while the
    /// engine writes them (`NotificationTap.notificationsHaveTriggers`): then
    /// each row goes in alone, with an id above the floor and the greatest read before it.
    private let rowByRow: Bool
    private let subjectKeys, areaKeys: OutputKeys
    /// The id of the last notification row this session's calls wrote, while
    /// their chain is unchanged (`confirmKeys`), and the statement that
    /// reads the greatest id to compare with it.
    private var lastIdWritten: Int64?
    private let greatestId: Statement
    /// The run the rows belong to (gf_runs.run_id; 0 for gf_check's calls, which record no run).
    private(set) var runId: Int64 = 0
    /// A copy of the notifications for a caller that also writes them elsewhere.
    var tap: NotificationTap?
    /// False: notifications go to the tap only (a pipeline's stream-only
    /// mode); the run's counts and the state are stored all the same.
    var storesNotifications = true

    /// For gf_check calls that keep the keys of earlier ones (`begin`): this
    /// connection's count of changed rows when the last call's writes ended,
    /// and the main database's data_version, which moves when another
    /// connection commits to it.
    private let db: Connection
    private let dataVersion: Statement
    private var changesAfterLastCall: Int64 = -1
    /// Whether the keys found since the last call began may be kept past it
    /// (`begin`): false while they may rest on another statement's change
    /// that a rollback could still undo.
    private var keysTrusted = false
    private var seenDataVersion: Int64?
    /// Whether this call's first write must still compare the data_version.
    private var dataVersionUnchecked = false

    init(_ db: Connection) throws {
        self.db = db
        dataVersion = try db.prepare("PRAGMA main.data_version")
        notifications = try RowBatches(db, "INSERT OR FAIL INTO main.gf_notification_rows (run_id, subject_key, ts_us, area_key, condition_id, "
                                       + "transition, lat, lon, accuracy_m, local_day) VALUES ", columns: 10,
                                       sizes: RowBatches.callSizes)
        notificationWithId = try db.prepare("INSERT OR FAIL INTO main.gf_notification_rows (id, run_id, subject_key, ts_us, area_key, "
                                            + "condition_id, transition, lat, lon, accuracy_m, local_day) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        ids = NotificationIds(db)
        rowByRow = try NotificationTap.notificationsHaveTriggers(db)
        explanations = try RowBatches(db, "INSERT OR FAIL INTO main.gf_explain (run_id, subject_id, ts, area_id, condition_id, kind, reason, lat, lon) VALUES ",
                                      columns: 9)
        subjectKeys = try OutputKeys(db, table: "main.gf_subject_keys", key: "subject_key", id: "subject_id")
        areaKeys = try OutputKeys(db, table: "main.gf_area_keys", key: "area_key", id: "area_id")
        greatestId = try db.prepare("SELECT max(id) FROM main.gf_notification_rows")
    }

    /// Starts a run or a gf_check call writing as `runId`. A run forgets the
    /// keys remembered from an earlier one: they may have been rolled back, or
    /// removed. With `keepingKeys` (a gf_check call of a session with no
    /// trigger of the user's on the tables it writes, so only its own
    /// statements write during it) they are kept if they were trusted and no
    /// statement on this connection changed a row since the last call's
    /// writes ended, and checked at this call's first lookup: the
    /// data_version (no other connection committed; a removal would be
    /// unseen) and each table's greatest key (no rollback took a key the
    /// calls gave, `OutputKeys.recheck`).
    ///
    /// Trusted: keys found after a change of the user's on this connection
    /// may rest on it (a dictionary row deleted, and its key given again to
    /// another id), and a rollback that undoes it restores the greatest key
    /// the check compares. So they are trusted only from a call that began
    /// `.clean` (nothing of this connection's left to roll back but what the
    /// calls write), or whose keys were trusted and unchanged since; never
    /// inside a statement that writes, whose changes count only once it ends
    /// and are undone whole if it fails.
    ///
    /// A main deserialized into memory (`sqlite3_deserialize`) keeps none: the
    /// whole database can be replaced between calls with none of these
    /// counts moving.
    func begin(runId: Int64, keepingKeys wanted: Bool = false, start: CallStart = .insideWritingStatement) {
        self.runId = runId
        let keepingKeys = wanted && !mainIsDeserialized
        let besideStatement = start == .insideWritingStatement
        let unchanged = keepingKeys && keysTrusted && !besideStatement && totalChanges == changesAfterLastCall
        if unchanged {
            subjectKeys.recheck()
            areaKeys.recheck()
            dataVersionUnchecked = true
        } else {
            lastIdWritten = nil
            // A batch run (gf_check's calls are run 0) may read a dictionary whole.
            subjectKeys.forget(run: runId != 0)
            areaKeys.forget(run: runId != 0)
            seenDataVersion = nil
            dataVersionUnchecked = keepingKeys  // read before this call's keys, for the next call to compare
        }
        keysTrusted = keepingKeys && (unchanged || start == .clean)
        ids.begin(unchanged: unchanged, fromCommitted: runId != 0 || (keepingKeys && start == .clean))
    }

    private var totalChanges: Int64 { sqlite.pointee.total_changes64!(db.handle) }

    /// Whether main is a database image deserialized into memory: its VFS is "memdb".
    private var mainIsDeserialized: Bool {
        var vfs: UnsafeMutablePointer<sqlite3_vfs>?
        guard sqlite.pointee.file_control!(db.handle, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) == SQLITE_OK,
              let name = vfs?.pointee.zName else { return true }
        return String(cString: name) == "memdb"
    }

    /// Forgets every key if another connection committed since the data_version was read here.
    private func checkDataVersion() throws {
        dataVersionUnchecked = false
        try dataVersion.bind([])
        defer { dataVersion.reset() }
        let now = try dataVersion.step() ? dataVersion.value(0).int64 : nil
        if now != seenDataVersion { subjectKeys.forget(); areaKeys.forget(); ids.forget(); lastIdWritten = nil }
        seenDataVersion = now
    }

    /// Runs `commitAndBegin` (a resumable run's chunk committed, the next
    /// transaction begun): another connection may write between the two,
    /// deleting keys or the newest notifications, which the next write then
    /// finds by the data_version (read now, compared then) and by the ids'
    /// floor, read again.
    func betweenTransactions(_ commitAndBegin: () throws -> Void) throws {
        try dataVersion.bind([])
        seenDataVersion = try dataVersion.step() ? dataVersion.value(0).int64 : nil
        dataVersion.reset()
        try commitAndBegin()
        dataVersionUnchecked = true
        ids.forget()
    }

    /// A requested interruption (a signal) stops a batch while its fixes are read.
    func checkStillWanted() throws {
        if Interruption.isRequested { throw Interruption.error(nil) }
    }

    /// Nothing to prepare: the rows' (subject_key, ts_us) index is kept as
    /// they go in, in that order, each entry beside the one before; building
    /// it at the end measured no faster (docs/write-path.md).
    func willStore(validFixes: Int) throws {}

    func store(_ notifications: [Notification], encoded: [UInt8]?) throws {
        if storesNotifications { try write(notifications) }
        try tap?.write(notifications, encoded)
        changesAfterLastCall = totalChanges
    }

    /// A call's last writes (`BatchEngine.judgeOne`): the count of changed rows after them is the one `begin` compares.
    func store(_ explanations: [Explanation]) throws {
        try write(explanations)
        changesAfterLastCall = totalChanges
    }

    /// Nothing to complete: every row is written as its subject is stored.
    func finish() throws {}

    var encode: (@Sendable ([Notification]) -> [UInt8]?)? { tap?.encode }

    /// Writes `all` in order, their subjects' and areas' keys found (or given) first.
    private func write(_ all: [Notification]) throws {
        if dataVersionUnchecked && !all.isEmpty { try checkDataVersion() }
        if !all.isEmpty && (subjectKeys.isUnchecked || areaKeys.isUnchecked) { try confirmKeys() }
        var keys: [(subject: Int64, area: Int64)] = []
        keys.reserveCapacity(all.count)
        for row in all { keys.append((try subjectKeys.key(of: row.subjectId), try areaKeys.key(of: row.areaId, slot: row.areaSlot))) }
        guard !all.isEmpty else { return }
        if rowByRow {
            lastIdWritten = nil
            for i in all.indices { try insert(all[i], keys[i], id: try ids.nextId()) }
            return
        }
        var rest = 0
        if let id = try ids.firstId(rows: all.count) {
            // The first row above the floor; SQLite numbers the rest after it.
            try insert(all[0], keys[0], id: id)
            rest = 1
        }
        try notifications.write(count: all.count - rest) { s, i, p in try self.bind(all[rest + i], keys[rest + i], s, at: p) }
        lastIdWritten = db.lastInsertRowid
    }

    /// Keeps the keys of earlier calls without comparing each dictionary
    /// with them (`OutputKeys.recheck`, a statement each) when the greatest
    /// notification id is still the last one the calls wrote. A key is
    /// given only for a notification written right after it, in the same
    /// call, and a rollback undoes the newest changes first: one that took a
    /// key took that call's rows and every row after them, the last written
    /// included, and ids only grow (SQLite's own are the greatest + 1, one
    /// above the floor greater still; none is trusted near 2^63, where SQLite
    /// picks ids at random). Anything else that could move the id (a delete,
    /// a write of the user's, another connection's commit) has ended the
    /// chain already (`begin`, `checkDataVersion`). Otherwise each dictionary
    /// is compared as before.
    private func confirmKeys() throws {
        guard let last = lastIdWritten, last < Int64.max / 2 else { return }
        try greatestId.bind([])
        defer { greatestId.reset() }
        guard try greatestId.step(), greatestId.value(0).int64 == last else { return }
        subjectKeys.confirm()
        areaKeys.confirm()
    }

    /// Inserts one notification with its id given (nil: SQLite's own).
    private func insert(_ row: Notification, _ keys: (subject: Int64, area: Int64), id: Int64?) throws {
        if let id { try notificationWithId.bind(integer: id, at: 1) } else { try notificationWithId.bindNull(at: 1) }
        try bind(row, keys, notificationWithId, at: 1)
        try notificationWithId.runBound()
    }

    /// Binds one notification's 10 values after parameter `p` (run, keys, time, condition, transition, position, day).
    private func bind(_ row: Notification, _ keys: (subject: Int64, area: Int64), _ s: Statement, at p: Int32) throws {
        try s.bind(integer: runId, at: p + 1)
        try s.bind(integer: keys.subject, at: p + 2)
        try s.bind(integer: row.ts.microseconds, at: p + 3)
        try s.bind(integer: keys.area, at: p + 4)
        try s.bind(integer: row.conditionId, at: p + 5)
        try s.bind(integer: Self.transitionCode(row.transition), at: p + 6)
        try s.bind(real: row.lat, at: p + 7)
        try s.bind(real: row.lon, at: p + 8)
        try s.bind(real: row.accuracy, at: p + 9)
        try s.bind(integer: Int64(row.localDay), at: p + 10)
    }

    /// gf_notification_rows.transition: 0 IN, 1 OUT, 2 DWELL (the gf_notifications view turns them back into text).
    static func transitionCode(_ t: ConditionDefinition.Timing) -> Int64 {
        switch t {
        case .IN: 0
        case .OUT: 1
        case .DWELL: 2
        }
    }

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
