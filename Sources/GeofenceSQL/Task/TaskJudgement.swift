import GeofenceCore

/// Judgement for one task of a distributed job (a Spark task): a catalog
/// opened read-only and prepared once, then any number of batches, each
/// with its subjects' state records given and the new ones returned. Nothing
/// is written anywhere: the catalog file is never changed, and a task that
/// is run again gives the same result (behaviour §4: subjects share nothing).
///
///     let task = try TaskJudgement(catalogPath: "fences.db")      // once per executor
///     let out = try task.judge(rows, states: [("u1", record)])     // per partition
///     out.notifications; out.states; out.report.counters
///
/// The doors of its `BatchEngine`: `KeptCatalog` (areas), `RecordStates`
/// (state), `CollectedRun` (notifications), no spill (a partition is ordered
/// in memory). Batches are judged one at a time per task (a lock).
/// `geofence judge --state` judges through the same path, with a file's
/// rows, a tap for the notifications and a TEMP spill (`Stream`).
public final class TaskJudgement {
    private let db: Connection
    private let catalog: KeptCatalog
    /// The conditions with a suppression: the only ones whose day a record keeps.
    private let suppressing: Set<Int64>
    /// How the task reads a time given as text: as `geofence judge` reads the
    /// catalog's feeds (`Settings.localZone`: without an offset, local time in
    /// the catalog's default_timezone once that is set to a zone).
    private let feed: FixFeed
    private let oneAtATime = Lock()

    /// What a batch gave: notifications in canonical order, every subject's
    /// record after it (subject_id byte order), and the run's counts.
    public struct Output {
        public var notifications: [Notification]
        public var states: [(subject: String, record: String)]
        public var report: BatchReport
    }

    /// Opens the catalog at `catalogPath` read-only and prepares every area.
    public convenience init(catalogPath: String) throws {
        try self.init(catalog: try HostSQLite.openReadOnly(catalogPath))
    }

    /// Judges against the catalog `db`, a connection the caller opened
    /// read-only (`geofence judge --state`), and prepares every area now.
    public init(catalog db: Connection) throws {
        self.db = db
        var feed = FixFeed.standard
        let tables = try CatalogTables(db)
        feed.localZone = try Settings(db, tables: tables).localZone()
        self.feed = feed
        suppressing = Set(try db.query("SELECT condition_id FROM \(tables.conditionRows) WHERE renotify_suppress_days > 0").compactMap { $0[0].int64 })
        catalog = try KeptCatalog(try SQLCatalog(db))
    }

    /// The number of areas the catalog holds.
    public var areaCount: Int { catalog.areaCount }

    /// Checks each given state record (`StateTransfer.check`: a subject_id a
    /// fix may have, a record this engine writes) and returns them in
    /// canonical form by subject. `describe(i)` names the i-th input in the
    /// caller's terms (a row of an Arrow batch) for the error of a bad one,
    /// or of a subject given twice.
    public static func checkedStates(_ states: [(subject: String, record: String)],
                                     describe: (Int) -> String) throws -> [SubjectKey: String] {
        // By the ids' bytes, as a catalog keys them: "café" composed and decomposed are two subjects.
        var byId: [SubjectKey: String] = [:], rowOf: [SubjectKey: Int] = [:]
        for (i, s) in states.enumerated() {
            let key = SubjectKey(s.subject)
            if let first = rowOf[key] {
                throw InputError("\(describe(i)): subject \(Echo.quoted(s.subject)) has a state record at \(describe(first)) already; give one per subject")
            }
            do { byId[key] = try StateTransfer.check(subject: s.subject, text: s.record).text } catch let e as InputError {
                throw InputError("\(describe(i)): \(e.message)")
            }
            rowOf[key] = i
        }
        return byId
    }

    /// Judges `rows` (in the order the engine takes as input order for
    /// fixes of equal time) with the subjects' records `states` (checked,
    /// canonical: `checkedStates`). A time given as text is read as `geofence
    /// judge` reads it in this catalog (`FixFeed.finish` with the catalog's
    /// zone: one without an offset is local time in its default_timezone once
    /// set, else refused and the fix invalid). Fixes older than their subject's last
    /// judged fix are stale (counted), invalid rows are counted as `geofence
    /// judge` counts them. A subject with a record and no fix keeps its
    /// record unchanged.
    public func judge(_ rows: [FixRow], states: [SubjectKey: String]) throws -> Output {
        var rows = rows
        if feed.readsTimesOrAccuracy {
            for i in rows.indices { feed.finish(&rows[i]) }
        }
        // Invalid rows described in the standard columns' terms (an Arrow batch has those).
        return try run(rows, states: states, stream: Stream(feed: .standard))
    }

    /// How a batch read from a file is judged (`geofence judge --state`):
    /// its rows come finished by a reader that knew the feed.
    public struct Stream {
        /// How the rows' source names its columns: invalid fixes are described in its terms.
        public var feed: FixFeed
        /// Where notifications go as they are judged, subject by subject in
        /// canonical order (`NotificationTap`); with one, `Output.notifications` is empty.
        public var tap: NotificationTap?
        /// Whether a batch past memory is ordered in a temporary table of
        /// the catalog's connection (TEMP: the catalog file is not written).
        public var spills = false
        /// Drops the fixes a device with these positioning settings would not have reported.
        public var fixFilter: FixFilter?
        /// A guess at the batch's size when the rows cannot tell (a file being read).
        public var expectedFixes: Int?
        /// Gets (fixes judged, valid fixes in the batch).
        public var progress: ((Int, Int) -> Void)?

        public init(feed: FixFeed, tap: NotificationTap? = nil) { self.feed = feed; self.tap = tap }
    }

    /// Judges `rows`, already finished as `stream.feed` reads them (a
    /// file's reader does that), with the subjects' records `states`
    /// (checked, canonical); otherwise as `judge(_:states:)`. Nothing is
    /// written to the catalog; the new records are in the output.
    public func judge(finished rows: some Sequence<FixRow>, states: [SubjectKey: String], stream: Stream) throws -> Output {
        try run(rows, states: states, stream: stream)
    }

    private func run(_ rows: some Sequence<FixRow>, states: [SubjectKey: String], stream: Stream) throws -> Output {
        try oneAtATime.with {
            let store = RecordStates(given: states, suppressing: suppressing)
            let sink = CollectedRun(tap: stream.tap)
            let engine = BatchEngine(BatchDoors(areas: catalog, states: store, sink: sink,
                                                spill: stream.spills ? SpilledFixes.Opener(db) : nil),
                                     fixFilter: stream.fixFilter)
            engine.feed = stream.feed
            // Kept areas are never dropped, however many.
            engine.settings.maxPreparedAreas = max(engine.settings.maxPreparedAreas, catalog.areaCount)
            let report = try engine.run(rows, expectedFixes: stream.expectedFixes, progress: stream.progress)
            return Output(notifications: sink.notifications, states: store.records(), report: report)
        }
    }
}
