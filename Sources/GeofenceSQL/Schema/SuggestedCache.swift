/// The page cache a catalog asks of every connection that opens it.
///
///     -- sqlite3 fences.db, a catalog made by `geofence init`
///     PRAGMA cache_size;            -- 16384: 64 MiB of 4 KiB pages, not SQLite's 2 MiB (-2000)
///     PRAGMA cache_size = -2000;    -- a connection's own setting still decides
///
/// A gf_check session returns to the same pages call after call: the
/// notification rows' index where it grows, the subject and area
/// dictionaries, the records of the subjects in turn. SQLite's 2 MiB
/// cache does not hold them, so each is read again from the OS, and the
/// caller pays for reads that no choice of theirs asked for. A database
/// file carries a suggested cache size in its header (offset 48, written
/// by `PRAGMA default_cache_size`), which SQLite gives every connection as
/// it opens the file; the catalog carries 64 MiB, as `journal_mode = WAL`
/// is set once and kept by the file. The cache grows only with the pages
/// read: a connection that reads little holds little (what many
/// connections may hold: docs/operations.md).
///
/// How it works: written where the header holds no size (SQLite then
/// reports its own default, a negative size in KiB), so a size the user
/// wrote there is kept: inside the creating transaction (`Schema.create`),
/// an upgrade's (`Schema.open`) and gf_state_init's. The header holds
/// pages, not bytes: 64 MiB divided by the file's page size (a file
/// rewritten with other pages keeps the count, docs/operations.md). A SQLite
/// built without deprecated features ignores the pragma, and the catalog
/// is then as SQLite's default leaves it.
public enum SuggestedCache {
    /// What the catalog suggests: 64 MiB, what the command-line tool sets on its own connections.
    static let bytes: Int64 = 64 << 20

    /// The suggestion in pages of `pageSize` bytes.
    public static func pages(_ pageSize: Int64) -> Int64 { bytes / max(pageSize, 512) }

    /// Writes the suggestion into `schema`'s header, inside the caller's
    /// transaction, unless the header holds a size of its own. The pragma
    /// also sets this connection's cache, which its caller chose
    /// (gf_state_init runs on a user's connection): kept.
    static func write(_ db: Connection, schema: String = "main") throws {
        guard let stored = try db.scalar("PRAGMA \(schema).default_cache_size").int64, stored < 0 else { return }
        let pageSize = try db.scalar("PRAGMA \(schema).page_size").int64 ?? 4096
        let own = try db.scalar("PRAGMA \(schema).cache_size").int64 ?? stored
        try db.execute("PRAGMA \(schema).default_cache_size = \(pages(pageSize))")
        try db.execute("PRAGMA \(schema).cache_size = \(own)")
    }
}
