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
    public init(catalogPath: String) throws {
        db = try HostSQLite.openReadOnly(catalogPath)
        var feed = FixFeed.standard
        feed.localZone = try Settings(db).localZone()
        self.feed = feed
        suppressing = Set(try db.query("SELECT condition_id FROM gf_conditions WHERE renotify_suppress_days > 0").compactMap { $0[0].int64 })
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
        return try oneAtATime.with {
            let store = RecordStates(given: states, suppressing: suppressing)
            let sink = CollectedRun()
            let engine = BatchEngine(BatchDoors(areas: catalog, states: store, sink: sink))
            // Kept areas are never dropped, however many.
            engine.settings.maxPreparedAreas = max(engine.settings.maxPreparedAreas, catalog.areaCount)
            let report = try engine.run(rows)
            return Output(notifications: sink.notifications, states: store.records(), report: report)
        }
    }
}
