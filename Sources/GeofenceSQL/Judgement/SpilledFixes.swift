import GeofenceCore

/// A batch's fixes in a temporary table that SQLite sorts (the engine's
/// `FixSpill`), for a batch too large to order in memory
/// (`BatchSettings.inMemoryFixes`). The table's seq keeps input order for
/// equal times; subject_id sorts by BINARY collation, the UTF-8 bytes the
/// engine orders subjects by. Dropped when the spill goes.
///
/// The temporary database is never mapped into memory (`PRAGMA
/// temp.mmap_size = 0`): its pages are written once, read once to be
/// sorted and once more to be freed when the table is dropped, and a mapped
/// page stays resident until the connection closes. Mapped, 10 M spilled
/// fixes added ~490 MiB of file-backed pages to the process's peak RSS
/// from the drop to the end of the run (benchmarks/results.md).
final class SpilledFixes: FixSpill {
    private let db: Connection
    private let insert: Statement
    private enum Column: Int, NamedColumns { case subject_id, ts_us, lat, lon, accuracy_m }

    /// Opens a spill on the connection when the engine asks for one.
    final class Opener: FixSpillOpener {
        private let db: Connection
        init(_ db: Connection) { self.db = db }
        func openSpill() throws -> FixSpill { try SpilledFixes(db) }
    }

    init(_ db: Connection) throws {
        self.db = db
        try db.execute("""
            DROP TABLE IF EXISTS temp.gf_batch;
            CREATE TEMP TABLE gf_batch (seq INTEGER PRIMARY KEY, subject_id TEXT, ts_us INTEGER, lat REAL, lon REAL, accuracy_m REAL);
            PRAGMA temp.mmap_size = 0;
            """)
        insert = try db.prepare("INSERT INTO temp.gf_batch (\(Column.list)) VALUES (?, ?, ?, ?, ?)")
    }

    deinit { try? db.execute("DROP TABLE IF EXISTS temp.gf_batch") }

    func add(_ f: Fix) throws {
        try insert.run([.text(f.subjectId), .integer(f.ts.microseconds), .real(f.position.lat), .real(f.position.lon), .real(f.accuracy)])
    }

    func forEachOrdered(_ body: (_ fix: Fix, _ newSubject: Bool) throws -> Void) throws {
        let ordered = try db.prepare("SELECT \(Column.list) FROM temp.gf_batch ORDER BY subject_id, ts_us, seq")
        var last: String?
        while try ordered.step() {
            let f = Fix(subjectId: ordered.value(Column.subject_id).string ?? "", ts: Timestamp(microseconds: ordered.value(Column.ts_us).int64 ?? 0),
                        lat: ordered.value(Column.lat).double ?? 0, lon: ordered.value(Column.lon).double ?? 0,
                        accuracy: ordered.value(Column.accuracy_m).double ?? 0)
            let new = last.map { !$0.hasSameUTF8(as: f.subjectId) } ?? true
            if new { last = f.subjectId }
            try body(f, new)
        }
    }
}
