extension Connection {
    /// Runs `body` with SQLite reading the file through its own page cache,
    /// not mapped into memory, and maps it again after (`PRAGMA mmap_size`).
    ///
    /// For reads that visit each page once, over a large part of a large
    /// catalog: mapped pages stay resident in the process until the
    /// mapping goes, each with its neighbours (the kernel maps a fault's
    /// surroundings too, and an import interleaves index and table pages),
    /// so on a large catalog such a read would count hundreds of megabytes
    /// in the process's peak RSS. Unmapping also lets go of the pages
    /// mapped before.
    func unmapped<R>(_ body: () throws -> R) throws -> R {
        let mapped = try scalar("PRAGMA mmap_size").int64 ?? 0
        if mapped != 0 { try execute("PRAGMA mmap_size = 0") }
        defer { if mapped != 0 { try? execute("PRAGMA mmap_size = \(mapped)") } }
        return try body()
    }
}

extension Connection {
    /// Copies the -wal into the database file and empties it (`PRAGMA
    /// wal_checkpoint(TRUNCATE)`), the file unmapped: SQLite writes a page
    /// that lies within its mapping by copying it into the mapping, so a
    /// checkpoint of a large run made mapped leaves every page it wrote
    /// resident in this process, and counted in its peak RSS. A command
    /// that writes a large transaction turns the automatic checkpoint at
    /// its COMMIT off (`PRAGMA wal_autocheckpoint = 0`) and calls this after.
    public func checkpointUnmapped() throws {
        try unmapped { _ = try query("PRAGMA wal_checkpoint(TRUNCATE)") }
    }
}
