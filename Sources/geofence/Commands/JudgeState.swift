import ArgumentParser
import GeofenceCore
import GeofenceSQL
@preconcurrency import Glibc

/// `geofence judge CATALOG --fixes F --state STATE`: judgement with the
/// catalog and the subjects' state apart (docs/state.md). The catalog is
/// opened read-only (`ReadOnlyCatalog.openShared`: SQLITE_OPEN_READONLY, no
/// side file left that was not there) and never written, so one catalog can
/// be shared by every run; the subjects' records come from STATE and go
/// back to it, in the lines of `geofence state export` (`StateLines`).
///
/// It judges through the path of a distributed task (`TaskJudgement`: the
/// same `BatchEngine` as every judgement, with the catalog's areas all
/// prepared at open, `RecordStates` for the state), the notifications
/// streamed to --out or standard output as `judge --no-store-notifications`
/// writes them (`RunEvents`, stream-only). The new state is written whole
/// beside STATE and renamed over it only once the notifications are out:
/// a run that fails or is stopped before leaves STATE as it was, and
/// running it again gives the same notifications again.
extension Judge {
    /// Refuses what --state cannot go with: what needs the catalog written
    /// (its inbox, gf_explain) and a state file that is no file of its own.
    func validateState() throws {
        guard let state else { return }
        if state == standardStream || state.isEmpty {
            throw ValidationError("--state needs a file name: the new state is written beside it and renamed over it, which standard input cannot be")
        }
        guard let fixes else {
            throw ValidationError("--state needs --fixes FILE: the inbox (--table) is in the catalog, which --state never writes or empties")
        }
        if table != "gf_fixes" {
            throw ValidationError("--table reads a table of the catalog, and --state judges --fixes FILE only: leave --table out")
        }
        if keep { throw ValidationError("--keep is about the catalog's inbox (gf_fixes), which --state neither reads nor empties: leave it out") }
        if explain {
            throw ValidationError("--explain records its reasons in the catalog (gf_explain), which --state never writes: leave it out, "
                                  + "or judge a copy of the catalog without --state")
        }
        if db.hasPrefix("file:") {
            throw ValidationError("--state opens the catalog read-only itself (and leaves no file beside it): name it as a file, not as the URI \(db)")
        }
        var st = stat()
        if stat(state, &st) == 0, st.st_mode & S_IFMT != S_IFREG {
            throw ValidationError("--state \(state) is not a regular file: the new state is written beside it and renamed over it")
        }
        for (option, path) in [("--fixes", fixes), ("--out", out)] {
            if let path, path != standardStream, Self.sameFile(path, state) {
                throw ValidationError("\(option) and --state name the same file (\(path)): the new state would be written over it")
            }
        }
    }

    /// The run of `judge --state STATE` (see the type's comment).
    func judgeWithState(_ statePath: String) throws {
        let conn = try ReadOnlyCatalog.openShared(db, reason: "judge --state opens it read-only")
        let feed = try feedColumns.feed(time: time, catalog: conn)
        // Both outputs are tried before the run: a state file that cannot be replaced (or is one of the
        // catalog's files) and a refused --out fail before anything is judged.
        try OutputFile(statePath, database: conn).discard()
        let output = try OutputFile(out == nil || out == standardStream ? nil : out, database: conn)
        // One run at a time on STATE, from before it is read until the new one is in place.
        try StateFileLock.take(statePath)
        let given = try readStates(statePath)
        let source = fixes ?? standardStream
        let spooled = try spooledFixes(source)
        let required = FixSources.columns.filter { $0 != "accuracy_m" || feed.defaultAccuracy == nil }
        let rows = try fixRows(source, format: fixesFormat, required: required, spooled: spooled, feed: feed)

        let task = try TaskJudgement(catalog: conn)
        // This process ends after the run: its prepared areas need not be freed.
        LeftToExit.keep(task)
        let events = try RunEvents(output, format: outFormat, database: conn, streamOnly: true)
        var stream = TaskJudgement.Stream(feed: feed, tap: events.tap)
        stream.spills = true
        stream.fixFilter = deviceFilter ? FixFilter(try Settings(conn).positioning()) : nil
        stream.expectedFixes = (source == standardStream && spooled == nil) ? nil : try FixSources.estimatedRows(spooled ?? source)
        let bar = ProgressBar(label: "judging", unit: "fixes")
        var judgedSoFar = 0
        stream.progress = { done, total in
            bar.update(done, total)
            if done > judgedSoFar { judgedSoFar = done; TestStops.reach(.chunk) }
        }
        let result = try task.judge(finished: rows, states: given, stream: stream)

        // A reader that stops early (`| head`) is a write error, and the state is left as it was.
        signal(SIGPIPE, SIG_IGN)
        try events.finishStreamed()
        // Held while the two files are put in place: a signal then comes after both.
        try SignalEnding.holdingSignals { try replaceState(statePath, with: result.states, conn, after: output) }
        let label = "run (not recorded: the state of \(counted(result.states.count, "subject")) is in \(statePath))"
        summarize(label, result.report, feed: feed, print: warn)
    }

    /// The subjects' records in the state file at `path`, checked and in
    /// canonical form (`StateLines.read`); none if there is no such file yet.
    /// A bad line is refused naming the file and the line.
    private func readStates(_ path: String) throws -> [SubjectKey: String] {
        guard let input = fopen(path, "r") else {
            guard errno == ENOENT else { throw InputError("cannot read the state file: \(String(cString: strerror(errno)))", file: path) }
            if !quiet { warn("\(path): no state file yet: every subject starts with no state") }
            return [:]
        }
        defer { fclose(input) }
        var given: [SubjectKey: String] = [:]
        try StateLines.read(input, path) { checked, _ in given[SubjectKey(checked.subject)] = checked.text }
        return given
    }

    /// Writes `records` (subject_id byte order, canonical texts) as the new
    /// state beside `path`, puts the notifications' `output` in place, then
    /// renames the state over `path`: the state moves on only once the
    /// notifications are out. An error before the rename leaves the old
    /// state (and removes what was not put in place).
    private func replaceState(_ path: String, with records: [(subject: String, record: String)], _ conn: Connection,
                              after output: OutputFile) throws {
        let file = try OutputFile(path, database: conn)
        var buffer: [UInt8] = []
        for (subject, record) in records {
            StateLines.line(subject, record, &buffer)
            if buffer.count >= 1 << 20 { try file.write(bytes: buffer); buffer.removeAll(keepingCapacity: true) }
        }
        try file.write(bytes: buffer)
        try file.close()
        try output.commit()
        try file.commit()
    }

    /// Whether `a` and `b` name one file: the same device and inode, or (for
    /// a file not made yet) the same place once links and folders are
    /// resolved (`./s.jsonl` and `s.jsonl`, a dangling link to the other).
    private static func sameFile(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var x = stat(), y = stat()
        if stat(a, &x) == 0 && stat(b, &y) == 0 { return x.st_dev == y.st_dev && x.st_ino == y.st_ino }
        return place(a) == place(b)
    }

    /// Where writing `path` would put a file: its links followed (a dangling
    /// one too), its folder's real path and its own name.
    private static func place(_ path: String) -> String {
        var path = path
        for _ in 0..<40 {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(path, &buffer, Int(PATH_MAX))
            guard n > 0 else { break }
            let target = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            path = target.hasPrefix("/") ? target : ReadOnlyCatalog.folder(of: path) + "/" + target
        }
        let folder = ReadOnlyCatalog.folder(of: path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let real = realpath(folder, nil) else { return path }
        defer { free(real) }
        return String(cString: real) + "/" + name
    }
}
