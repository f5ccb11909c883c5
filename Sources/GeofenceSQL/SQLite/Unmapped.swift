extension Connection {
    /// Runs `body` with SQLite reading the main database file through its
    /// own page cache, not mapped into memory, and maps it again after
    /// (`PRAGMA main.mmap_size`).
    ///
    /// For reads that visit each page once, over a large part of a large
    /// catalog: mapped pages stay resident in the process until the
    /// mapping goes, each with its neighbours (the kernel maps a fault's
    /// surroundings too, and an import interleaves index and table pages),
    /// so on a large catalog such a read would count hundreds of megabytes
    /// in the process's peak RSS. Unmapping also lets go of the pages
    /// mapped before.
    ///
    /// Only `main` is named: a pragma without a schema sets every attached
    /// database, the temporary one included, and would map a batch's
    /// spilled fixes (`SpilledFixes`, which keeps its file unmapped).
    func unmapped<R>(_ body: () throws -> R) throws -> R {
        let mapped = try scalar("PRAGMA main.mmap_size").int64 ?? 0
        if mapped != 0 { try execute("PRAGMA main.mmap_size = 0") }
        defer { if mapped != 0 { try? execute("PRAGMA main.mmap_size = \(mapped)") } }
        return try body()
    }
}
