extension Connection {
    /// Runs `body` inside one read transaction when none is open (`BEGIN`,
    /// then `COMMIT`, however `body` ends); inside the caller's, when one is.
    ///
    /// For many small reads in a row (a batch reading the rows of the areas
    /// it reached, one statement each): in autocommit mode each statement
    /// takes and drops SQLite's shared lock (two `fcntl` calls) and checks
    /// whether another connection changed the file, every time. The rows
    /// are read from one snapshot of the file instead, and a writer waits
    /// (rollback journal) or writes beside it (WAL) for as long as `body` runs.
    func inReadTransaction<R>(_ body: () throws -> R) throws -> R {
        guard isAutocommit else { return try body() }
        try execute("BEGIN")
        defer { if !isAutocommit { try? execute("COMMIT") } }
        return try body()
    }
}
