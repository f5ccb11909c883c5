import GeofenceCore

/// The valid fixes of a batch, handed back ordered by subject, time and input
/// order: the order judgement needs (SPEC §4), whatever order they came in.
///
/// Up to `inMemoryLimit` fixes are grouped by subject in memory (a fix is
/// ~50 bytes here); past that they spill to a temporary table and SQLite
/// sorts them, so a batch never needs to fit in memory. Staging through SQLite
/// was half of a medium judgement's wall time, all of it on one core.
///
/// Subjects are told apart and ordered by their UTF-8 bytes, as SQLite's
/// BINARY collation does, never by Swift's canonical equivalence: "é" and
/// "e\u{301}" are two subjects, as they are two rows in `gf_stays`.
final class FixStaging {
    private let db: Connection
    private let inMemoryLimit: Int
    private var groups: [SubjectKey: [Fix]] = [:]
    private var inMemory = 0
    private var spill: Statement?

    /// Called before the first use of the connection (another thread may be
    /// reading the catalog through it until then: `AreaPreparation`).
    var beforeSQLite: (() -> Void)?

    init(_ db: Connection, inMemoryLimit: Int) {
        self.db = db
        self.inMemoryLimit = inMemoryLimit
    }

    deinit { if spill != nil { try? db.execute("DROP TABLE IF EXISTS temp.gf_batch") } }

    func add(_ f: Fix) throws {
        if let spill {
            try spill.run([.text(f.subjectId), .integer(f.ts.microseconds), .real(f.position.lat), .real(f.position.lon), .real(f.accuracy)])
            return
        }
        groups[SubjectKey(f.subjectId), default: []].append(f)
        inMemory += 1
        if inMemory > inMemoryLimit { try spillToTable() }
    }

    /// Calls `body` with each fix in order.
    func forEachOrdered(_ body: (Fix) throws -> Void) throws {
        guard spill != nil else {
            for key in groups.keys.sorted() {
                let fixes = groups[key]!
                // Most files list a subject's fixes in time order already.
                if zip(fixes, fixes.dropFirst()).allSatisfy({ $0.ts <= $1.ts }) {
                    for f in fixes { try body(f) }
                    continue
                }
                // Stable: equal times keep their input order.
                for f in fixes.enumerated().sorted(by: { ($0.element.ts, $0.offset) < ($1.element.ts, $1.offset) }) {
                    try body(f.element)
                }
            }
            return
        }
        let ordered = try db.prepare("SELECT subject_id, ts_us, lat, lon, accuracy_m FROM temp.gf_batch ORDER BY subject_id, ts_us, seq")
        while try ordered.step() {
            try body(Fix(subjectId: ordered.value(0).string ?? "", ts: Timestamp(microseconds: ordered.value(1).int64 ?? 0),
                         lat: ordered.value(2).double ?? 0, lon: ordered.value(3).double ?? 0, accuracy: ordered.value(4).double ?? 0))
        }
    }

    /// Moves what is in memory to the table, in input order within each subject
    /// (the table's seq keeps that order for equal times).
    private func spillToTable() throws {
        beforeSQLite?()
        try db.execute("""
            DROP TABLE IF EXISTS temp.gf_batch;
            CREATE TEMP TABLE gf_batch (seq INTEGER PRIMARY KEY, subject_id TEXT, ts_us INTEGER, lat REAL, lon REAL, accuracy_m REAL);
            """)
        let insert = try db.prepare("INSERT INTO temp.gf_batch (subject_id, ts_us, lat, lon, accuracy_m) VALUES (?, ?, ?, ?, ?)")
        spill = insert
        let held = groups
        groups = [:]
        for fixes in held.values { for f in fixes { try add(f) } }
    }
}

/// A subject id compared, hashed and ordered by its UTF-8 bytes.
struct SubjectKey: Hashable, Comparable {
    let id: String
    init(_ id: String) { self.id = id }
    static func == (a: SubjectKey, b: SubjectKey) -> Bool { a.id.hasSameUTF8(as: b.id) }
    static func < (a: SubjectKey, b: SubjectKey) -> Bool { a.id.utf8.lexicographicallyPrecedes(b.id.utf8) }
    func hash(into h: inout Hasher) {
        if id.utf8.withContiguousStorageIfAvailable({ h.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in id.utf8 { h.combine(byte) }
        }
    }
}
