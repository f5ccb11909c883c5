/// Which conditions have a suppression (`renotify_suppress_days > 0`,
/// behaviour §5), asked one condition at a time and remembered: what
/// `StateStore` needs to know of a condition whose last-notified day a
/// subject's state holds, since a record keeps only the days a suppression
/// reads.
///
///     let suppressing = try SuppressingConditions(db)
///     try suppressing.contains(17)   // one primary-key read, then remembered
///
/// Why one at a time: the days a state holds are those of conditions that
/// notified its subject, a handful among a catalog's millions. Reading every
/// suppressing condition up front made the first gf_check (and `geofence
/// check`) scan the whole of gf_conditions, over a second on a cold
/// million-fence catalog, and hold a set as large as the catalog's
/// suppressions. Here the reads and the memory follow the conditions asked.
///
/// Contract: `contains` is what `condition_id IN (SELECT condition_id FROM
/// gf_conditions WHERE renotify_suppress_days > 0)` would say (a condition
/// that is gone suppresses nothing), read within the caller's transaction.
/// An answer is remembered for the life of this object, so its owner must
/// not outlive a change of the conditions: a judgement's store lives as long
/// as its judgement, which a batch runs in one transaction and a gf_check
/// session drops whenever the catalog may have changed.
final class SuppressingConditions {
    private let lookup: Statement
    private var known: [Int64: Bool] = [:]

    init(_ db: Connection) throws {
        // The stored rows only: an implied condition has no suppression.
        lookup = try db.prepare("SELECT renotify_suppress_days > 0 FROM \(try CatalogTables(db).conditionRows) WHERE condition_id = ?")
    }

    /// Whether condition `id` exists and has a suppression.
    func contains(_ id: Int64) throws -> Bool {
        if let answer = known[id] { return answer }
        try lookup.bind([.integer(id)])
        // Reset at once: a statement left on its row holds a read lock (the statement is reused).
        defer { lookup.reset() }
        let answer = try lookup.step() && (lookup.value(0).int64 ?? 0) != 0
        known[id] = answer
        return answer
    }
}
