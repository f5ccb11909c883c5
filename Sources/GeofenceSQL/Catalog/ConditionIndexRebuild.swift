/// `gf_conditions_by_area` built once, by sorting, at the end of an import
/// into a catalog without conditions, instead of entry by entry with every
/// default condition inserted.
///
/// Why: an index filled entry by entry leaves each page as full as it was
/// when the next entry did not fit (SQLite then starts a new page), about
/// 12 % of its bytes unused; `CREATE INDEX` sorts and packs its pages. At a
/// million areas with their default IN and OUT that is 5 MiB of a 46 MiB
/// index, with the same entries and the same answers.
///
/// Only when gf_conditions is empty at the start: nothing of the import then
/// looks a condition up by area (an area's removal, which does, happens
/// before, with `--replace`), and sorting the new entries is the whole
/// index. The index is re-created from the engine's text (sql/001), inside
/// the import's transaction, so a failed or killed import rolls it back with
/// the rest. A catalog that lacks the index is left without it.
struct ConditionIndexRebuild {
    static let name = "gf_conditions_by_area"
    static let definition = EmbeddedSQL.definitions(inMigration: 1).first { $0.name == name }
    let db: Connection
    private var dropped = false

    init(_ db: Connection) { self.db = db }

    /// Drops the index when the catalog has no condition and the index is
    /// there; call inside the transaction, after any clearing, before the inserts.
    mutating func begin() throws {
        guard Self.definition != nil else { return }
        let empty = try db.scalar("SELECT NOT EXISTS (SELECT 1 FROM gf_conditions)").int64 == 1
        let present = try db.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?", [.text(Self.name)]).int64 == 1
        guard empty, present else { return }
        try db.query("DROP INDEX \"\(Self.name)\"")
        dropped = true
    }

    /// Re-creates the index `begin` dropped, from the engine's text.
    func finish() throws {
        guard dropped, let d = Self.definition else { return }
        try db.query(d.sql)  // one statement, prepared and stepped
    }
}
