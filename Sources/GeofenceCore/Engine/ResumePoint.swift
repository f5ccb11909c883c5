/// Where a batch cut short goes on from, and how the engine tells its
/// caller that a chunk is complete (docs/operations.md, "Resumable runs").
///
/// A batch is judged in chunks of whole subjects, in the subjects' byte
/// order (docs/batch.md). A caller that commits after each chunk
/// (`BatchEngine.afterChunk`) can resume a batch cut short by judging the
/// same fixes again with `BatchEngine.resume` set to what the last commit
/// recorded: every subject up to `lastSubject` is skipped (it was judged and
/// its results stored), the rows' explanations are not stored again (the
/// first chunk stored them), and the counts go on from `counters`. So the
/// results and their order are those of a batch never cut short.
public struct ResumePoint: Sendable {
    /// The last subject whose results were committed.
    public var lastSubject: String
    /// The counts of the subjects committed (not those of the invalid rows,
    /// which the engine counts again as it reads them).
    public var counters: JudgeCounters

    public init(lastSubject: String, counters: JudgeCounters) {
        self.lastSubject = lastSubject; self.counters = counters
    }

    /// Whether `subject`'s fixes were judged before the cut: it comes at or
    /// before `lastSubject` in byte order.
    func covers(_ subject: String) -> Bool {
        !lastSubject.utf8.lexicographicallyPrecedes(subject.utf8)
    }
}

/// What the engine reports after each chunk (`BatchEngine.afterChunk`): the
/// chunk's last subject and the counts of every subject judged so far (the
/// invalid rows' counts are added only at the batch's end).
public struct ChunkDone: Sendable {
    public var lastSubject: String
    public var counters: JudgeCounters
    /// Rows read, valid or not (`BatchReport.fixes`): known before the first chunk.
    public var rows: Int
}
