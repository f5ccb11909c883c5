/// One `INSERT … VALUES` prepared for 64, 16, 4 and 1 rows, so that n rows
/// go in as few statements as their count allows (35 rows: two of 16, three
/// of 1), each bound value by value; or, for a gf_check call's rows, for 64,
/// 32, 16, 8 and every count from 7 down to 1 (35 rows: one of 32, one of 3).
///
///     let rows = try RowBatches(db, "INSERT INTO t (a, b) VALUES ", columns: 2)
///     try rows.write(count: items.count) { s, i, p in
///         try s.bind(integer: items[i].a, at: p + 1)
///         try s.bind(text: items[i].b, at: p + 2)
///     }
///
/// Why: a statement's start and end cost about as much as one row of it
/// (a row of a multi-row VALUES list costs a little more than a statement's
/// own row, so the tiers are few). A gf_check call writes a handful of
/// notifications, each statement inside the call's savepoint, so there one
/// statement for 1 to 8 rows is worth the extra tiers.
/// SQLite inserts the rows of one VALUES list in their order and fires row
/// triggers row by row, so the rows and their ids are those of one
/// statement per row, and each row trigger sees the rows before its own;
/// one reading `changes()` sees where the statement began.
///
/// The engine's heads say `INSERT OR FAIL`: every batch is written inside a
/// transaction or savepoint of the engine's that is undone whole on any
/// error, so no statement needs undoing on its own. With the default ABORT,
/// SQLite keeps a statement journal for each multi-row INSERT inside a
/// transaction, a copy of every page the statement touches, and once one
/// statement's copies pass 64 KiB (an index's scattered leaves do) that
/// journal is a temporary file until the transaction ends: a judgement's
/// notifications wrote each touched index page to it once more (two of
/// every three `pwrite`s of a run; docs/write-path.md). FAIL stops the
/// statement at the failing row and leaves the rows before it to that
/// enclosing rollback.
final class RowBatches {
    /// Statements by rows per statement, largest first.
    private let tiers: [(rows: Int, statement: Statement)]
    private let columns: Int

    static let sizes = [64, 16, 4, 1]
    /// The tiers for a gf_check call's rows: any count below 128 in at most five statements, 1 to 8 in one.
    static let callSizes = [64, 32, 16, 8, 7, 6, 5, 4, 3, 2, 1]

    /// `head` is the INSERT up to VALUES; `tail` follows the values (an ON CONFLICT clause).
    init(_ db: Connection, _ head: String, columns: Int, tail: String = "", sizes: [Int] = sizes) throws {
        let row = "(" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")"
        tiers = try sizes.map { n in (n, try db.prepare(head + Array(repeating: row, count: n).joined(separator: ", ") + tail)) }
        self.columns = columns
    }

    /// Writes rows 0..<count; `bind(statement, row, offset)` binds row `row`'s
    /// values at `offset + 1`, `offset + 2`, … of `statement`.
    func write(count: Int, _ bind: (Statement, Int, Int32) throws -> Void) throws {
        try Self.split(count, sizes: tiers.lazy.map(\.rows)) { tier, start in
            let (n, s) = tiers[tier]
            for k in 0..<n { try bind(s, start + k, Int32(columns * k)) }
            try s.runBound()
        }
    }

    /// Cuts `count` items into runs of `sizes` (largest first, ending with
    /// 1): `body(tier, first item)` once per run, `tier` an index into
    /// `sizes` (a statement of that many items each).
    static func split(_ count: Int, sizes: some Collection<Int> = sizes, _ body: (_ tier: Int, _ start: Int) throws -> Void) rethrows {
        var start = 0
        for (tier, n) in sizes.enumerated() {
            while count - start >= n {
                try body(tier, start)
                start += n
            }
        }
    }
}
