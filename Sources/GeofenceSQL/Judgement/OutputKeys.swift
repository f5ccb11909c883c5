import GeofenceCore

/// The integer keys notifications are stored under (gf_subject_keys,
/// gf_area_keys): a subject's or an area's key is looked up the first time
/// it notifies in a transaction, and given (inserted) the first time it ever
/// notifies.
///
///     let subjects = try OutputKeys(db, table: "gf_subject_keys", key: "subject_key", id: "subject_id")
///     let k = try subjects.key(of: "u1")
///
/// Keys found are remembered only until `forget`, which the writer calls
/// at the start of every run and gf_check call: a key given in a
/// transaction that was then rolled back is gone from the table, and must
/// not be used again from memory. Ids are told apart by their bytes, as
/// SQLite tells them: Swift's `==` takes "é" and "e\u{301}" for one string,
/// so a remembered key is used only for the very bytes it was found for.
final class OutputKeys {
    private let find, give: Statement
    /// The keys found in this transaction, by the ids' bytes.
    private var known = KeysByBytes()
    /// The id looked up last and its key: a subject's notifications come
    /// one after another, so most lookups of a subject's key ask for the
    /// id asked for just before.
    private var last: (id: String, key: Int64)?
    /// Keys found in this transaction by the area's slot in the run's grid
    /// (`Notification.areaSlot`): one array read where a lookup by bytes
    /// misses the cache twice, on the writing thread, the run's critical
    /// path. Each with its id, compared before it is used.
    private var bySlot: [(id: String, key: Int64)?] = []

    /// `table` maps its TEXT column `id` (UNIQUE) to its INTEGER PRIMARY KEY `key`.
    init(_ db: Connection, table: String, key: String, id: String) throws {
        find = try db.prepare("SELECT \(key) FROM \(table) WHERE \(id) = ?")
        give = try db.prepare("INSERT INTO \(table) (\(id)) VALUES (?) RETURNING \(key)")
    }

    /// The key of `id`, given now if it has none.
    func key(of id: String) throws -> Int64 {
        if let last, KeysByBytes.same(last.id, id) { return last.key }
        if let k = known[id] { last = (id, k); return k }
        let k = try Self.first(find, id) ?? Self.first(give, id)
        guard let k else { throw CatalogError("no key could be given to \(Echo.quoted(id)) in its dictionary") }
        known[id] = k
        last = (id, k)
        return k
    }

    /// The key of `id`, whose slot in the run's grid is `slot` (-1: none).
    func key(of id: String, slot: Int32) throws -> Int64 {
        guard slot >= 0 else { return try key(of: id) }
        let i = Int(slot)
        if i < bySlot.count, let hit = bySlot[i], KeysByBytes.same(hit.id, id) { return hit.key }
        let k = try key(of: id)
        if i >= bySlot.count { bySlot.append(contentsOf: repeatElement(nil, count: i + 1 - bySlot.count)) }
        bySlot[i] = (id, k)
        return k
    }

    /// Forgets every key found: the next transaction looks them up again.
    func forget() {
        known.removeAll()
        last = nil
        bySlot.removeAll(keepingCapacity: true)
    }
    /// The first column of `statement`'s first row with `id` bound, as an integer; nil without a row.
    private static func first(_ statement: Statement, _ id: String) throws -> Int64? {
        try statement.bind([.text(id)])
        // Reset at once: a statement left on its row holds its table open (and an INSERT's RETURNING, its write).
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        let k = statement.value(0).int64
        while try statement.step() {}
        return k
    }
}
