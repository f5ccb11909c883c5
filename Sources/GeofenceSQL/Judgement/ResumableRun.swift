import GeofenceCore

/// A run that commits chunk by chunk and can be resumed where its last
/// commit left it (`judge --fixes FILE --resume`; docs/operations.md,
/// "Resumable runs"). Its record is gf_runs (status 'running' until its
/// end, then 'done') and gf_run_inputs (the input's identity, the options,
/// the catalog's stamp, and the last subject committed).
///
///     let found = try RecordedRun.unfinished(conn)          // at most one
///     let report = try judgement.runResumable(rows, input: input, resuming: found, commit: commitAndBegin)
///
/// Each chunk (whole subjects, in byte order) is written, then its progress
/// (the run's counts so far and its last subject), then `commit` commits it
/// and begins the next transaction; a cut (a kill, a full disk) loses at
/// most the chunk under way, which consumed no notification id (the ids
/// follow the greatest one stored, or the floor: `NotificationIds`). Resumed, the run skips
/// the subjects committed and goes on with the same run id: its rows, ids,
/// counts and states are those of a run never cut.
public struct RunInput: Equatable, Sendable {
    /// The file as given (what gf_runs.source records) and made absolute (what messages name).
    public var source: String, path: String
    public var size: Int64
    /// SHA-256 of the whole file, in hex: the input is known by its content.
    public var sha256: String
    /// The options that change what is judged, as the command line names them ("" for none).
    public var options: String

    public init(source: String, path: String, size: Int64, sha256: String, options: String) {
        self.source = source; self.path = path; self.size = size; self.sha256 = sha256; self.options = options
    }
}

/// The temporary file a resumable run's `--out` is written to, its format,
/// and its length synced with the last chunk committed.
public struct RecordedOutput: Equatable, Sendable {
    public var partial: String, format: String
    public var bytes: Int64

    public init(partial: String, format: String, bytes: Int64) {
        self.partial = partial; self.format = format; self.bytes = bytes
    }
}

/// A resumable run as recorded in gf_runs and gf_run_inputs.
public struct RecordedRun: Sendable {
    public var runId: Int64
    public var startedAt: String
    public var done: Bool
    public var input: RunInput
    /// gf_meta.catalog_stamp when the run began.
    public var catalogStamp: String
    public var notificationsAfter: Int64
    /// The last subject committed; nil before the first chunk's commit.
    public var lastSubject: String?
    /// The counts of the subjects committed (for a run not done).
    public var counters: JudgeCounters
    /// Its --out file as the last chunk committed left it; nil: none to go on with.
    public var output: RecordedOutput?

    static let select = """
        SELECT r.run_id, r.started_at, r.status, r.source, i.path, i.size, i.sha256, i.options, i.catalog_stamp,
               i.notifications_after, i.last_subject, r.judged, r.stale, r.invalid, r.transitions, r.notifications,
               r.filtered, r.dropped_accuracy, r.dropped_distance, i.out_partial, i.out_format, i.out_bytes
        FROM gf_run_inputs AS i JOIN gf_runs AS r ON r.run_id = i.run_id
        """

    init(_ row: [SQLiteValue]) {
        runId = row[0].int64 ?? 0
        startedAt = row[1].string ?? ""
        done = row[2].string == "done"
        input = RunInput(source: row[3].string ?? "", path: row[4].string ?? "", size: row[5].int64 ?? 0,
                         sha256: row[6].string ?? "", options: row[7].string ?? "")
        catalogStamp = row[8].string ?? ""
        notificationsAfter = row[9].int64 ?? 0
        lastSubject = row[10].string
        var c = JudgeCounters()
        let n = (11...18).map { Int(row[$0].int64 ?? 0) }
        (c.judged, c.stale, c.invalid, c.transitions, c.notifications, c.filtered) = (n[0], n[1], n[2], n[3], n[4], n[5])
        (c.droppedAccuracy, c.droppedDistance) = (n[6], n[7])
        counters = c
        if let partial = row[19].string, let format = row[20].string, let bytes = row[21].int64 {
            output = RecordedOutput(partial: partial, format: format, bytes: bytes)
        }
    }

    /// Records, in the chunk's transaction, where run `runId`'s --out stands
    /// once the chunk is committed (nil: nowhere to go on from).
    public static func record(_ output: RecordedOutput?, run runId: Int64, _ db: Connection) throws {
        try db.query("UPDATE gf_run_inputs SET out_partial = ?, out_format = ?, out_bytes = ? WHERE run_id = ?",
                     [output.map { .text($0.partial) } ?? .null, output.map { .text($0.format) } ?? .null,
                      output.map { .integer($0.bytes) } ?? .null, .integer(runId)])
    }

    /// The resumable run still 'running' (cut short, or being judged by
    /// another process), the earliest if several; nil if none. (A run the
    /// user gave up, its status set to anything else, is not one.)
    public static func unfinished(_ db: Connection) throws -> RecordedRun? {
        try db.query(select + " WHERE r.status = 'running' ORDER BY r.run_id LIMIT 1").first.map(RecordedRun.init)
    }

    /// The latest resumable run that judged `input`'s content to its end; nil if none.
    public static func finished(judging input: RunInput, _ db: Connection) throws -> RecordedRun? {
        try db.query(select + " WHERE i.sha256 = ? AND i.size = ? AND r.status = 'done' ORDER BY r.run_id DESC LIMIT 1",
                     [.text(input.sha256), .integer(input.size)]).first.map(RecordedRun.init)
    }

    /// The catalog's stamp now (gf_meta.catalog_stamp, sql/005).
    public static func catalogStamp(_ db: Connection) throws -> String {
        switch try db.scalar("SELECT value FROM gf_meta WHERE key = 'catalog_stamp'") {
        case .integer(let i): return String(i)
        case let v: return v.string ?? ""
        }
    }
}

extension Judgement {
    /// Judges `rows` (the content of `input`) as a resumable run: a new one,
    /// or `resuming` from its last committed subject. After each chunk its
    /// progress is written and `commit` is called with the run and the
    /// chunk's last subject, which must commit and begin the next transaction; the caller commits the end. A run whose
    /// progress another process has moved on since (it resumed the same run)
    /// is stopped before its chunk is committed, naming the run.
    public func runResumable(_ rows: some Sequence<Row>, input: RunInput, resuming: RecordedRun?, expectedFixes: Int? = nil,
                             progress: ((Int, Int) -> Void)? = nil,
                             commit: @escaping (_ runId: Int64, _ lastSubject: String) throws -> Void) throws -> Report {
        let runId = try resuming?.runId ?? startRun(kind: "judge", source: input.source)
        var report = Report(runId: runId, notificationsAfter: try resuming?.notificationsAfter ?? lastNotificationId())
        if resuming == nil { try recordInput(input, report) }
        output.begin(runId: runId)
        engine.resume = resuming.flatMap { r in r.lastSubject.map { ResumePoint(lastSubject: $0, counters: r.counters) } }
        var last = resuming?.lastSubject
        engine.afterChunk = { [unowned self] chunk in
            try self.recordProgress(runId, chunk, after: last)
            last = chunk.lastSubject
            try self.output.betweenTransactions { try commit(runId, chunk.lastSubject) }
        }
        defer { engine.afterChunk = nil; engine.resume = nil }
        report.batch = try engine.run(rows, expectedFixes: expectedFixes, progress: progress)
        try finishRun(report)
        try db.query("UPDATE gf_runs SET status = 'done' WHERE run_id = ?", [.integer(runId)])
        return report
    }

    private func recordInput(_ input: RunInput, _ report: Report) throws {
        try db.query("UPDATE gf_runs SET status = 'running' WHERE run_id = ?", [.integer(report.runId)])
        try db.query("""
            INSERT INTO gf_run_inputs (run_id, path, size, sha256, options, catalog_stamp, notifications_after)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.integer(report.runId), .text(input.path), .integer(input.size), .text(input.sha256), .text(input.options),
                  .text(try RecordedRun.catalogStamp(db)), .integer(report.notificationsAfter)])
    }

    /// The run's counts so far and its last subject, written in the chunk's
    /// transaction; only over the progress this process left (`after`).
    private func recordProgress(_ runId: Int64, _ chunk: ChunkDone, after: String?) throws {
        var so = Report(runId: runId)
        so.fixes = chunk.rows
        so.counters = chunk.counters
        try finishRun(so)
        try db.query("UPDATE gf_run_inputs SET last_subject = ? WHERE run_id = ? AND last_subject IS ?",
                     [.text(chunk.lastSubject), .integer(runId), after.sqlValue])
        guard db.changes == 1 else {
            throw CatalogError("run \(runId) was resumed by another process meanwhile (its progress is no longer what this one "
                               + "committed): this one stops, its last chunk rolled back; the other goes on with the run")
        }
    }
}
