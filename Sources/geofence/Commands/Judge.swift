import ArgumentParser
import GeofenceCore
import GeofenceSQL
@preconcurrency import Glibc

struct Judge: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Judge a batch of fixes: stay state, transitions, notifications.",
        discussion: """
            Fixes come from --fixes FILE (CSV with a header, or NDJSON with .ndjson/.jsonl) or from \
            --table (default gf_fixes, the inbox, which a run empties). Columns: subject_id, ts, lat, \
            lon, accuracy_m, or the feed's own names with --columns; --time-unit ms reads epoch \
            milliseconds, --accuracy-m M stands in for a missing accuracy (docs/inputs.md). Per subject, fixes are judged in time order (ties keep input order, and the later of two fixes at one time is stale); \
            stale and invalid fixes are counted and skipped. The run is one transaction.

            --resume (with --fixes FILE) commits the run chunk by chunk (whole subjects, about 200,000 \
            fixes) and can be resumed: after a kill or a full disk, the same command goes on from the \
            last chunk committed, with the same run id, and ends as a run never cut would have; until \
            then gf_runs.status is 'running'. A file whose content a --resume run judged to its end is \
            not judged again (exit status 0, naming the run). While a run is unfinished, judging other \
            fixes is refused (docs/operations.md, "Resumable runs").

            --out FILE writes this run's notifications, CSV columns subject_id, ts, area_id, \
            condition_id, transition (IN, OUT, DWELL), lat, lon, accuracy_m (ts in UTC), in canonical \
            order (subject, time, area, condition); --format ndjson writes one JSON object per line \
            with the same fields and a GeoJSON Point geometry; geojson a FeatureCollection of Point \
            Features with those fields as properties, geojsonseq the same Features one per line. --out - writes them to standard \
            output and the summary to standard error; --fixes - reads standard input (CSV, or \
            NDJSON with --fixes-format ndjson).

            --no-store-notifications (with --out), for pipelines: the notifications go to --out only \
            and are not stored in the catalog; the run is still recorded in gf_runs with its counts, \
            and the subjects' state is stored as always.

            --state FILE keeps the subjects' state in FILE instead of the catalog, which is then opened \
            read-only and never written (a catalog shared by many runs): FILE holds one JSON line per \
            subject as `geofence state export` writes them, is read if it exists, and is replaced whole \
            once the notifications are out (docs/state.md). The notifications go to --out, or standard \
            output; the counts to standard error; no run is recorded.
            """)

    @Argument(help: "The database file.") var db: String
    @Option(help: "A CSV or NDJSON file of fixes to judge (the inbox is left alone).") var fixes: String?
    @Option(help: "A table or view of fixes to judge.") var table = "gf_fixes"
    @Flag(help: "Keep the judged rows in gf_fixes instead of emptying the inbox.") var keep = false
    @Option(help: "Also write this run's notifications to a file (CSV, or see --format); - for standard output.") var out: String?
    @Option(help: "Format of --out: csv, ndjson (one JSON object per notification), geojson (a FeatureCollection of Points) or geojsonseq (one Feature per line); default: by the name (.csv: CSV; .ndjson, .jsonl: NDJSON; .geojson, .json: GeoJSON; .geojsonl, .geojsons, .geojsonseq: GeoJSONSeq; a name of another format, such as .gpkg, is refused), else CSV.")
    var format: EventFormat?
    /// What --out's name may say: the formats judge writes, by extension.
    static let outNames = OutputFormatNames<EventFormat>(command: "judge", formats: EventFormat.extensions, fallback: .csv)
    /// The format --out is written in (validate() has refused a name of another).
    var outFormat: EventFormat { (try? Self.outNames.resolve(out: out, given: format)) ?? format ?? .csv }
    @Option(help: ArgumentHelp(fixesFormatHelp + " --format is the output's."))
    var fixesFormat: FixSources.FileFormat?
    @OptionGroup var feedColumns: FeedColumnOptions
    @OptionGroup var time: TimeUnitOption
    @Flag(help: "Record why fixes did not count and transitions did not notify (table gf_explain).") var explain = false
    @Flag(help: "Drop the fixes a phone with the stored positioning settings would not have reported: worse than the accuracy tier, or closer than the distance filter to the subject's last fix.")
    var deviceFilter = false
    @Flag(help: "With --out: write the notifications to --out only, not to the catalog (stream-only); the run's counts and the state are stored.")
    var noStoreNotifications = false
    @Option(help: "Keep the subjects' state in this file (JSON lines, as `state export` writes them) and never write the catalog, opened read-only.")
    var state: String?
    @Flag(help: "With --fixes FILE: commit the run chunk by chunk; after a kill or a full disk the same command resumes it, and a file judged to its end is not judged again.")
    var resume = false
    /// Fixes per chunk, whatever the strategy (`BatchSettings`); with
    /// --resume a chunk is what a kill can lose.
    @Option(help: ArgumentHelp("With --resume: fixes per chunk (whole subjects; default 200,000), the most a kill or a full disk can lose.",
                               valueName: "N"))
    var chunkFixes: Int?
    /// Fixes ordered in memory before the rest spill to a temporary table (`BatchSettings`): tests make them small.
    @Option(help: .hidden) var inMemoryFixes: Int?
    @Flag(help: "Print only the summary line.") var quiet = false
    @Option(help: ArgumentHelp("Judging threads (1–256). Default: the CPUs this process may use (its affinity mask and cgroup CPU quota), at most 8.",
                               valueName: "N"))
    var threads: Int?

    func validate() throws {
        if let threads, !(1...256).contains(threads) {
            throw ValidationError("--threads must be a whole number from 1 to 256, got \(threads)")
        }
        try requireOutputName(out)
        _ = try Self.outNames.resolve(out: out, given: format)
        try validateState()
        if resume {
            guard let fixes, fixes != standardStream else {
                throw ValidationError("--resume needs --fixes FILE (a file, which a resumed run reads again; the inbox and standard input are judged in one transaction)")
            }
            if state != nil { throw ValidationError("--resume judges into the catalog: --state FILE runs are one transaction") }
            if noStoreNotifications {
                throw ValidationError("--resume cannot be used with --no-store-notifications: a resumed run may have to read its committed chunks' notifications back from the catalog for --out")
            }
        }
        if let chunkFixes, chunkFixes < 1 { throw ValidationError("--chunk-fixes must be at least 1, got \(chunkFixes)") }
        if noStoreNotifications && out == nil {
            throw ValidationError("--no-store-notifications needs --out FILE (or --out - for standard output): the notifications would go nowhere")
        }
    }

    /// The command that lists run `run`'s notifications as --out has them
    /// (with --no-store-notifications, that they are nowhere else).
    func listCommand(_ run: Int64) -> String {
        if noStoreNotifications { return "no command (they were not stored: --no-store-notifications)" }
        return "`geofence notifications \(Echo.shellWord(db)) --run \(run) --format \(outFormat.rawValue)`"
    }

    func run() throws {
        HugePages.adviseForThisProcess()
        Parallel.threads = threads
        if let state { return try reporting { try judgeWithState(state) } }
        try reporting {
            let conn = try openCatalog(db)
            let feed = try feedColumns.feed(time: time, catalog: conn)
            // Hashed before the run's write lock is taken.
            let opened = try resume ? fixes.map(resumableInput) : nil
            let input = opened?.input
            // Opened first: a refused or unwritable --out fails before the run; a resumed
            // run's partial file taken up again if it may be (confirmed under the lock).
            let partial = try input == nil ? nil : RecordedRun.unfinished(conn)?.output.flatMap { $0.format == outFormat.rawValue ? $0 : nil }
            let output = try out.map { try OutputFile($0 == standardStream ? nil : $0, database: conn, reusing: partial) }
            // A stream is read to its end before the run takes the write lock.
            // A resumable run reads the very file it hashed (its descriptor, not its name again).
            let spooled = try opened?.readPath ?? fixes.flatMap(spooledFixes)
            let bar = ProgressBar(label: "judging", unit: "fixes")
            var committedRun: Int64 = 0
            var judgedSoFar = 0
            /// The run and subject of a resumable run's last chunk committed.
            var committedChunk: (run: Int64, subject: String)?
            // Signals are held across the COMMIT; from it on, one puts the output in place or says where the run's events are.
            let commit: (() throws -> Void) throws -> Void = { sqliteCommit in
                try SignalEnding.holdingSignals {
                    try sqliteCommit()
                    output?.committed(run: committedRun, list: listCommand(committedRun))
                }
            }
            let transaction = { try conn.transaction(aroundCommit: commit) { () -> (Judgement.Report, RunEvents?) in
                let plan = try input.map { try resumePlan(conn, $0) }
                if input == nil { try refuseBesideUnfinished(conn) }
                let required = FixSources.columns.filter { $0 != "accuracy_m" || feed.defaultAccuracy == nil }
                let rows: AnySequence<Judgement.Row> = try fixes.map { try fixRows($0, format: fixesFormat, required: required, spooled: spooled, feed: feed) }
                    ?? AnySequence(FixSources.table(conn, name: table, feed: feed))
                let filter = deviceFilter ? FixFilter(try Settings(conn).positioning()) : nil
                let judgement = try Judgement(conn, explain: explain, fixFilter: filter)
                judgement.feed = feed
                // Written as the run stores its rows, where that gives what reading them back would.
                // A resumed run's output goes on from its partial file, or is read back whole.
                let resumed: RunEvents.Resumed = plan?.resuming == nil ? .no
                    : output?.reused != nil && output?.reused == plan?.resuming?.output ? .appending : .readBack
                let events = try output.map { try RunEvents($0, format: outFormat, database: conn, streamOnly: noStoreNotifications,
                                                             resumed: resumed) }
                judgement.notificationTap = events?.tap
                judgement.storesNotifications = !noStoreNotifications
                if let chunkFixes {
                    (judgement.chunkFixes, judgement.plannedChunkFixes, judgement.onDemandChunkFixes) = (chunkFixes, chunkFixes, chunkFixes)
                } else if resume {
                    // A chunk is what a kill loses: a plan's 1,000,000-fix chunk would make a daily
                    // feed one chunk. Five chunks cost no more than one (benchmarks/results.md).
                    judgement.plannedChunkFixes = min(judgement.plannedChunkFixes, judgement.chunkFixes)
                    judgement.onDemandChunkFixes = min(judgement.onDemandChunkFixes, judgement.chunkFixes)
                }
                if let inMemoryFixes { judgement.inMemoryFixes = inMemoryFixes }
                // This process ends after the run: its areas need not be freed.
                defer { judgement.leaveAreasToExit() }
                let expected = try fixes.flatMap { try ($0 == standardStream && spooled == nil) ? nil : FixSources.estimatedRows(spooled ?? $0) }
                let progress = { (done: Int, total: Int) in
                    bar.update(done, total)
                    if done > judgedSoFar { judgedSoFar = done; TestStops.reach(.chunk) }
                }
                let report = try plan.map { plan in
                    try judgement.runResumable(rows, input: plan.input, resuming: plan.resuming, expectedFixes: expected, progress: progress) {
                        try RecordedRun.record(try events?.committing(), run: $0, conn)
                        try conn.commitAndContinue()
                        committedChunk = ($0, $1)
                        SignalEnding.chunkCommitted = true
                        TestStops.reach(.chunkCommitted)
                    }
                } ?? judgement.run(rows, source: fixes ?? table, expectedFixes: expected, progress: progress)
                if fixes == nil && table == "gf_fixes" && !keep { try conn.execute("DELETE FROM gf_fixes") }
                // A file is written and synced inside the transaction (a write error rolls the run
                // back); standard output, a FIFO or a device only once the run is committed, so a
                // reader never receives the events of a run that was then rolled back.
                if output?.canRewind == true { try events?.finish(conn, NotificationListing(of: report)) }
                committedRun = report.runId
                return (report, events)
            } }
            let (report, events): (Judgement.Report, RunEvents?)
            do {
                (report, events) = try transaction()
            } catch let done as AlreadyJudged {
                // Killed after its last commit, before --out was put in place: the file is whole beside it.
                if let out, out != standardStream, let left = done.run.output, left.format == outFormat.rawValue,
                   OutputFile.placeLeft(left, footer: Array(outFormat.footer.utf8), at: out) {
                    return sayBesideEvents("\(out): run \(done.run.runId)'s output, whole at its last commit, put in place "
                                           + "(the run was cut before it could do so); nothing judged")
                }
                return sayAlreadyJudged(done)
            } catch {
                if let (run, subject) = committedChunk { sayUnfinished(run: run, upTo: subject, file: fixes ?? "") }
                throw error
            }
            // A reader that stops early (`| head`) is a write error, reported with the committed run, not a silent SIGPIPE.
            if output != nil { signal(SIGPIPE, SIG_IGN) }
            do {
                if output?.canRewind == false { try events?.finish(conn, NotificationListing(of: report)) }
                try output?.commit()
            } catch var e as InputError {
                e.message += "; the run (\(report.runId)) was committed: \(listCommand(report.runId)) lists its notifications"
                throw e
            }
            // A committed run is in the -wal until a checkpoint, and this process ends with statements
            // still open (a connection closed that way keeps its -wal): copied alone, the catalog
            // file would lack the run. Written into it now, as a last connection's close would do.
            _ = try? conn.query("PRAGMA wal_checkpoint(TRUNCATE)")
            // With the events on standard output, the summary and the hint go to standard error.
            summarize("run \(report.runId)", report.batch, feed: feed, print: sayBesideEvents)
            if !quiet && explain { sayBesideEvents("reasons: `geofence explain \(Echo.shellWord(db)) --run \(report.runId)` (table gf_explain)") }
        }
    }
}

extension Judge {
    /// Prints a line for the user: on standard output, or on standard error
    /// when the events go to standard output (--out -), never among them.
    func sayBesideEvents(_ line: String) {
        if out == standardStream { warn(line) } else { print(line) }
    }

    /// Prints the run's counts as one line opening with `label`, then (unless
    /// --quiet, on standard error) what was wrong with its invalid fixes and
    /// how many times were read in the catalog's zone.
    func summarize(_ label: String, _ report: BatchReport, feed: FixFeed, print: (String) -> Void) {
        let c = report.counters
        print("\(label): \(counted(report.fixes, "fix", plural: "fixes")): \(c.judged) judged, \(c.stale) stale, \(c.invalid) invalid; "
              + "\(counted(c.transitions, "transition")), \(counted(c.notifications, "notification")), \(c.filtered) not notified (filters)"
              + (deviceFilter ? "; device filter dropped \(c.droppedAccuracy) (accuracy), \(c.droppedDistance) (distance)" : ""))
        if !quiet, let first = report.firstInvalid {
            // On standard error whatever the output: a cron job's log keeps it.
            warn("invalid fixes: \(c.invalid) of \(report.fixes), not judged; the first: \(first)"
                 + (explain ? "" : " (--explain records every reason in gf_explain)"))
            if let cure = Self.cure(report, feed: feed) { warn(cure) }
        }
        if !quiet, report.earlyMillisecondTimes > 0 {
            // Never silent either: a feed mixing seconds and milliseconds stores its seconds in 1970.
            warn("\(counted(report.earlyMillisecondTimes, "time")) read as epoch milliseconds (--time-unit ms) fall before 1973, "
                 + "where a Unix time in seconds lands read so: judged as given; convert a feed that mixes both units first")
        }
        if !quiet, report.localTimes > 0, let zone = feed.localZone {
            // Never silent: a feed of naive UTC times read in another zone is off by its offset.
            warn("\(counted(report.localTimes, "time")) without a UTC offset read as local time in \(zone.name) (the catalog's default_timezone)")
        }
    }

    /// What to do when every invalid fix failed the same way a feed's
    /// fixes do when an option is missing: epoch milliseconds read as
    /// seconds, local times without a zone, no accuracy column. nil when
    /// the invalid fixes are not all of one such kind.
    static func cure(_ report: BatchReport, feed: FixFeed) -> String? {
        let invalid = report.counters.invalid
        guard invalid > 0 else { return nil }
        if feed.timeUnit == .seconds && report.millisecondTimes == invalid && report.fixes == invalid {
            return "every invalid fix has a time of 13 digits, read as Unix seconds: epoch milliseconds (pandas' to_json, JavaScript)? "
                + "--time-unit ms reads them"
        }
        // Beside valid fixes, whose numeric times --time-unit ms would read as milliseconds too.
        if feed.timeUnit == .seconds && report.millisecondTimes > 0 {
            return "\(report.millisecondTimes) of the \(invalid) invalid fixes have a time of 13 digits, read as Unix seconds: epoch "
                + "milliseconds? --time-unit ms reads every numeric time so: a feed that also has times in seconds needs converting first"
        }
        if report.offsetlessTimes == invalid {
            return "every invalid fix has a time without a UTC offset: write one (Z, +09:00), or name the zone they are in with "
                + "`geofence settings DB default_timezone ZONE` (Etc/UTC for UTC)"
        }
        if feed.defaultAccuracy == nil && report.missingAccuracies == invalid {
            return "every invalid fix has no accuracy: --accuracy-m METRES gives fixes without one that accuracy"
        }
        return nil
    }
}

let notificationColumns = ["subject_id", "ts", "area_id", "condition_id", "transition", "lat", "lon", "accuracy_m"]

/// A stored column as people read it: stored times carry six fraction
/// digits for exact ordering, people get the short form.
func notificationField(_ i: Int, _ v: SQLiteValue) -> String? { EventColumns.notifications.field(i, v) }

func notificationRows(_ conn: Connection, _ listing: NotificationListing) throws -> [[String?]] {
    let rows = try listing.statement(conn)
    defer { rows.reset() }
    var out: [[String?]] = []
    while try rows.step() { out.append(notificationColumns.indices.map { notificationField($0, rows.value($0)) }) }
    return out
}
