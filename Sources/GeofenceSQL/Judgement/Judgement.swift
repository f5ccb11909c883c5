import GeofenceCore

/// One judgement run over fixes against a geofence database: the door of
/// the core's `BatchEngine` for `geofence judge` (a batch), `geofence check`
/// and gf_check() (one fix). Everything between reading a fix and handing
/// over its results is the engine's; this class gives it the database's
/// doors and records the run (behaviour §2, §4, §5):
///
/// | door | here |
/// |---|---|
/// | `AreaSource` | `SQLCatalog` (with AreaPreparation.swift, OnDemandCatalog.swift) |
/// | `SubjectStateStore` | `StateStore`: a record per subject in gf_subject_state, and gf_inside |
/// | `RunSink` | `RunOutput`: gf_notification_rows and its keys (the gf_notifications view), gf_explain, and a `NotificationTap` |
/// | `FixSpill` | `SpilledFixes`: a temporary table SQLite sorts |
///
/// Notifications are stored in canonical order, so their ids order them by
/// subject, time, area_id, condition_id. The caller owns the transaction: a
/// failed run leaves nothing behind.
public final class Judgement {
    /// A fix as read from a table or file, before validation (`FixRow`, in the core).
    public typealias Row = FixRow

    /// The run's record and what the engine reported (read through as `report.fixes`, `report.counters`, …).
    @dynamicMemberLookup
    public struct Report {
        public var runId: Int64
        /// The largest notification id before the run (0 for none): every
        /// row the run writes has a larger one, so a listing of the run can
        /// read that range instead of the whole table.
        public var notificationsAfter: Int64 = 0
        public var batch = BatchReport()
        public subscript<T>(dynamicMember path: WritableKeyPath<BatchReport, T>) -> T {
            get { batch[keyPath: path] }
            set { batch[keyPath: path] = newValue }
        }
    }

    let db: Connection
    let catalog: SQLCatalog
    let state: StateStore
    let output: RunOutput
    /// The core engine behind every kind of run.
    public let engine: BatchEngine

    /// With `fixFilter`, a batch drops the fixes a device with those positioning settings would not have reported.
    public init(_ db: Connection, explain: Bool = false, fixFilter: FixFilter? = nil) throws {
        self.db = db
        try Schema.requireCurrent(db, for: "judgement")
        catalog = try SQLCatalog(db)
        state = try StateStore(db)
        output = try RunOutput(db)
        engine = BatchEngine(BatchDoors(areas: catalog, states: state, sink: output, spill: SpilledFixes.Opener(db)),
                             explain: explain, fixFilter: fixFilter)
    }

    /// How the rows' source names its columns (`BatchEngine.feed`).
    public var feed: FixFeed {
        get { engine.feed }
        set { engine.feed = newValue }
    }

    /// False: the notifications go to `notificationTap` only, none is stored
    /// (stream-only: `judge --out FILE --no-store-notifications`); the run
    /// is recorded with its counts and the state is stored as always.
    public var storesNotifications: Bool {
        get { output.storesNotifications }
        set { output.storesNotifications = newValue }
    }

    /// A batch's notifications handed on as they are stored (`NotificationTap`).
    public var notificationTap: NotificationTap? {
        get { output.tap }
        set { output.tap = newValue }
    }

    /// Judges a batch as one run (`BatchEngine.run`). `progress` gets (fixes
    /// judged, valid fixes in the batch); `expectedFixes` is a guess at the
    /// batch's size when `rows` cannot tell (a file being read).
    public func run(_ rows: some Sequence<Row>, source: String?, expectedFixes: Int? = nil,
                    progress: ((Int, Int) -> Void)? = nil) throws -> Report {
        var report = Report(runId: try startRun(kind: "judge", source: source), notificationsAfter: try lastNotificationId())
        output.begin(runId: report.runId)
        report.batch = try engine.run(rows, expectedFixes: expectedFixes, progress: progress)
        try finishRun(report)
        return report
    }

    /// Judges one fix (checkLocation, `BatchEngine.judgeOne`): returns its
    /// notifications. `inSession`: gf_check's session, which lives across
    /// calls (its candidates come through windows of the index,
    /// `CandidateStrategy.windows`). With `trustingLastSave` (the session,
    /// which drops this judgement as soon as anything else writes) the state
    /// saved by the previous check is reused when the database still shows
    /// its last fix, and the dictionary keys it used are kept
    /// (`RunOutput.begin`) as far as `start`, where the call began, allows.
    public func check(_ row: Row, recordRun: Bool = true, inSession: Bool = false,
                      trustingLastSave: Bool = false, start: CallStart = .insideWritingStatement) throws -> (Report, [Notification]) {
        var report = Report(runId: recordRun ? try startRun(kind: "check", source: nil) : 0,
                            notificationsAfter: recordRun ? try lastNotificationId() : 0)
        output.begin(runId: report.runId, keepingKeys: inSession && trustingLastSave && !recordRun, start: start)
        state.trustsLastSave = trustingLastSave
        let one = try engine.judgeOne(row, strategy: .forOneFix(inSession: inSession))
        report.fixes = 1
        report.counters = one.counters
        if recordRun { try finishRun(report) }
        return (report, one.notifications)
    }

    /// For a process that exits right after the run (`BatchEngine.leaveAreasToExit`).
    public func leaveAreasToExit() { engine.leaveAreasToExit() }

    // MARK: Settings (`BatchSettings`; tests shrink them)

    public var maxPreparedAreas: Int { get { engine.settings.maxPreparedAreas } set { engine.settings.maxPreparedAreas = newValue } }
    public var chunkFixes: Int { get { engine.settings.chunkFixes } set { engine.settings.chunkFixes = newValue } }
    public var plannedChunkFixes: Int { get { engine.settings.plannedChunkFixes } set { engine.settings.plannedChunkFixes = newValue } }
    public var onDemandChunkFixes: Int { get { engine.settings.onDemandChunkFixes } set { engine.settings.onDemandChunkFixes = newValue } }
    public var inMemoryFixes: Int { get { engine.settings.inMemoryFixes } set { engine.settings.inMemoryFixes = newValue } }

    // MARK: The run's record in gf_runs

    func startRun(kind: String, source: String?) throws -> Int64 {
        try db.query("INSERT INTO gf_runs (kind, source, started_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                     [.text(kind), source.sqlValue])
        return try db.scalar("SELECT last_insert_rowid()").int64 ?? 0
    }

    /// Read inside the run's transaction: no other writer can insert before
    /// its rows, and ids are never handed out twice (`NotificationIds`): the run's are all above it.
    func lastNotificationId() throws -> Int64 {
        try db.scalar("SELECT coalesce(max(id), 0) FROM gf_notification_rows").int64 ?? 0
    }

    func finishRun(_ r: Report) throws {
        let c = r.counters
        try db.query("""
            UPDATE gf_runs SET fixes = ?, judged = ?, stale = ?, invalid = ?, transitions = ?, notifications = ?, filtered = ?,
                               dropped_accuracy = ?, dropped_distance = ?
            WHERE run_id = ?
            """, [.integer(Int64(r.fixes)), .integer(Int64(c.judged)), .integer(Int64(c.stale)), .integer(Int64(c.invalid)),
                  .integer(Int64(c.transitions)), .integer(Int64(c.notifications)), .integer(Int64(c.filtered)),
                  .integer(Int64(c.droppedAccuracy)), .integer(Int64(c.droppedDistance)), .integer(r.runId)])
    }
}
