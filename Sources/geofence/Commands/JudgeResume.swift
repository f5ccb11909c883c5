import GeofenceCore
import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `judge --fixes FILE --resume`: a run committed chunk by chunk, which the
/// same command resumes after a kill or a full disk, and which a rerun of
/// the same file does not judge twice (docs/operations.md, "Resumable runs";
/// the run's record is `RecordedRun`, its chunks `Judgement.runResumable`).
///
/// Inside the run's transaction the catalog's runs decide what happens:
/// - a run of this file's content still 'running': resumed, if it was judged
///   with the same options against the same catalog (else refused, saying
///   what differs);
/// - a 'running' run of another file: refused, naming it and how to finish
///   it (a catalog holds one unfinished run: its subjects are half judged);
/// - a run that judged this content to its end: nothing is done (`AlreadyJudged`);
/// - else a new run.
/// A judge without --resume is refused while a run is unfinished, for the same reason.
struct ResumePlan {
    let input: RunInput
    /// The run to resume; nil: a new run.
    let resuming: RecordedRun?
}

/// The input was judged to its end by `run`: the command does nothing and says so (exit status 0).
struct AlreadyJudged: Error {
    let run: RecordedRun
    /// The input given now (its path may differ from the run's).
    let input: RunInput
}

extension Judge {
    /// The options that change what is judged, as the command line writes
    /// them ("" for none): a run is resumed only with the same.
    var judgedOptions: String {
        var parts: [String] = []
        if explain { parts.append("--explain") }
        if deviceFilter { parts.append("--device-filter") }
        if let f = fixesFormat { parts.append("--fixes-format \(f.rawValue)") }
        if let c = feedColumns.columns { parts.append("--columns \(c)") }
        if let a = feedColumns.accuracyM { parts.append("--accuracy-m \(a)") }
        if time.timeUnit != .seconds { parts.append("--time-unit \(time.timeUnit.rawValue)") }
        return parts.joined(separator: " ")
    }

    /// What --resume records of --fixes FILE (its content's SHA-256 and
    /// size, read once before the run), and the path the run reads it by:
    /// the descriptor hashed (`/dev/fd/N`, kept open to the process's end),
    /// so that a name switched meanwhile (a link, a file renamed over it)
    /// cannot make the run judge one content recorded as another.
    func resumableInput(_ file: String) throws -> (input: RunInput, readPath: String) {
        // O_NONBLOCK: opening a FIFO for reading would wait for a writer (refused below).
        let fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw InputError("cannot read: \(String(cString: strerror(errno)))", file: file) }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
            close(fd)
            throw InputError("--resume needs a regular file, which a resumed run reads again; this is a pipe or a device", file: file)
        }
        guard let (hex, size) = SHA256.ofDescriptor(fd) else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw InputError("cannot read: \(reason)", file: file)
        }
        let path = realpath(file, nil).map { p in defer { free(p) }; return String(cString: p) } ?? file
        return (RunInput(source: file, path: path, size: size, sha256: hex, options: judgedOptions), "/dev/fd/\(fd)")
    }

    /// Inside the run's transaction: resume, refuse, do nothing, or a new run (`ResumePlan`).
    func resumePlan(_ conn: Connection, _ input: RunInput) throws -> ResumePlan {
        if let open = try RecordedRun.unfinished(conn) {
            try requireResumable(open, by: input, conn)
            return ResumePlan(input: input, resuming: open)
        }
        if let done = try RecordedRun.finished(judging: input, conn) { throw AlreadyJudged(run: done, input: input) }
        return ResumePlan(input: input, resuming: nil)
    }

    /// Without --resume: refuses while a resumable run is unfinished.
    func refuseBesideUnfinished(_ conn: Connection) throws {
        guard let open = try RecordedRun.unfinished(conn) else { return }
        throw InputError("\(describe(open)) is unfinished, its other subjects not judged yet: judging other fixes now would judge "
                         + "those subjects out of order. Finish it first: \(resumeCommand(open)); \(giveUp(open))")
    }

    /// Refuses to resume `open` with `input` unless it is the same content,
    /// judged with the same options, against the same catalog.
    private func requireResumable(_ open: RecordedRun, by input: RunInput, _ conn: Connection) throws {
        var differs: [String] = []
        if input.size != open.input.size { differs.append("its size is \(input.size) bytes, not \(open.input.size)") }
        if input.sha256 != open.input.sha256 {
            differs.append("its content differs (SHA-256 \(input.sha256.prefix(12))…, not \(open.input.sha256.prefix(12))…)")
        }
        if !differs.isEmpty {
            let which = input.path == open.input.path ? "\(input.path) changed since that run began judging it"
                                                      : "\(input.path) is not that run's input"
            throw InputError("\(describe(open)) is unfinished; \(which): \(differs.joined(separator: "; ")). "
                             + "Finish that run with its own file: \(resumeCommand(open)); \(giveUp(open))")
        }
        if input.options != open.input.options {
            throw InputError("\(describe(open)) was judged with options '\(open.input.options)', this command gives "
                             + "'\(input.options)': resume it with the same options, or its two parts would be judged differently")
        }
        if try RecordedRun.catalogStamp(conn) != open.catalogStamp {
            throw CatalogError("\(describe(open)) cannot be resumed: the catalog's areas, conditions or settings changed since it "
                               + "began (a change made meanwhile by any command or SQL, even one set back: the catalog's stamp is "
                               + "new), and its remaining subjects would be judged against another catalog than its first ones. "
                               + "To judge them against the catalog as it is now, give the run up, its committed subjects "
                               + "standing (\(giveUpCommand(open))), then judge the file again (`geofence judge \(Echo.shellWord(db)) --fixes "
                               + "\(Echo.shellWord(open.input.path)) --resume`): the committed subjects' fixes then count as stale")
        }
    }

    /// `run N (judge --resume of PATH, started T)`, and how far it came.
    private func describe(_ run: RecordedRun) -> String {
        let upTo = run.lastSubject.map { ", committed up to subject \(Echo.quoted($0))" } ?? ""
        return "run \(run.runId) (judge --resume of \(run.input.path), started \(run.startedAt)\(upTo))"
    }

    private func resumeCommand(_ run: RecordedRun) -> String {
        let options = run.input.options.isEmpty ? "" : " " + run.input.options
        return "`geofence judge \(Echo.shellWord(db)) --fixes \(Echo.shellWord(run.input.path))\(options) --resume`"
    }

    private func giveUp(_ run: RecordedRun) -> String {
        "to give it up instead, its committed subjects standing: " + giveUpCommand(run)
    }

    /// The SQL that gives `run` up (its committed subjects stand), as a shell command.
    private func giveUpCommand(_ run: RecordedRun) -> String {
        "`sqlite3 \(Echo.shellWord(db)) \"UPDATE gf_runs SET status = 'abandoned' WHERE run_id = \(run.runId)\"`"
    }

    /// What a resumable run cut short by an error says, after the error: where it stands and how to go on.
    func sayUnfinished(run: Int64, upTo subject: String, file: String) {
        warn("run \(run) is unfinished, committed up to subject \(Echo.quoted(subject)): "
             + "`geofence judge \(Echo.shellWord(db)) --fixes \(Echo.shellWord(file))"
             + "\(judgedOptions.isEmpty ? "" : " " + judgedOptions)\(outputOptions) --resume` goes on from there")
    }

    /// This command's options that do not change what is judged but what it
    /// writes and how it commits (--out, --format, --chunk-fixes), for the
    /// command a user repeats: without them a resumed run writes no --out.
    private var outputOptions: String {
        var words: [String] = []
        if let out { words += ["--out", Echo.shellWord(out)] }
        if let format { words += ["--format", format.rawValue] }
        if let chunkFixes { words += ["--chunk-fixes", String(chunkFixes)] }
        return words.isEmpty ? "" : " " + words.joined(separator: " ")
    }

    /// The line for an input judged to its end already.
    func sayAlreadyJudged(_ done: AlreadyJudged) {
        let line = "\(done.input.source): already judged to its end by run \(done.run.runId) (started \(done.run.startedAt)"
            + (done.run.input.path == done.input.path ? "" : ", as \(done.run.input.path)") + "): nothing judged"
            + (out == nil ? "" : ", \(out == standardStream ? "standard output" : out!) not written") + "; "
            + "`geofence notifications \(Echo.shellWord(db)) --run \(done.run.runId)` lists its notifications"
        sayBesideEvents(line)
    }
}
