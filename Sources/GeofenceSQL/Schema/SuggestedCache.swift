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
/// read: a connection that reads little holds little.
///
/// How it works: written inside the creating transaction (`Schema.create`),
/// in bytes divided by the file's page size, and in an upgrade's transaction
/// (`Schema.open`) where the header holds none (SQLite then reports its own
/// default, a negative size in KiB): a size a user wrote there is kept.
/// A SQLite built without deprecated features ignores the pragma, and the
/// catalog is then as SQLite's default leaves it.
enum SuggestedCache {
    /// What the catalog suggests: 64 MiB, what the command-line tool sets on its own connections.
    static let bytes: Int64 = 64 << 20

    /// Writes the suggestion into `schema`'s header (inside the caller's
    /// transaction). The pragma also sets this connection's cache, which
    /// its caller chose (gf_state_init runs on a user's connection): kept.
    static func write(_ db: Connection, schema: String = "main") throws {
        let pageSize = max(try db.scalar("PRAGMA \(schema).page_size").int64 ?? 4096, 512)
        let own = try db.scalar("PRAGMA \(schema).cache_size").int64 ?? -2000
        try db.execute("PRAGMA \(schema).default_cache_size = \(bytes / pageSize)")
        try db.execute("PRAGMA \(schema).cache_size = \(own)")
    }

    /// The same, where the header holds no suggestion of its own.
    static func writeIfUnset(_ db: Connection, schema: String = "main") throws {
        guard let stored = try db.scalar("PRAGMA \(schema).default_cache_size").int64, stored < 0 else { return }
        try write(db, schema: schema)
    }
}
