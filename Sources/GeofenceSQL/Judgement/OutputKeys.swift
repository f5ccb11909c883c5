import GeofenceCore

/// The integer keys notifications are stored under (gf_subject_keys,
/// gf_area_keys): a subject's or an area's key is looked up the first time
/// it notifies in a transaction, and given (inserted) the first time it ever
/// notifies; a lookup that misses costs a statement, so after an id that
/// was given the next is inserted first (nothing is inserted for an id the
/// table holds) and after one that was found, looked up first.
///
///     let subjects = try OutputKeys(db, table: "main.gf_subject_keys", key: "subject_key", id: "subject_id")
///     let k = try subjects.key(of: "u1")
///
/// A key given in a transaction that was then rolled back is gone from the
/// table and must not be used again from memory. So the writer forgets every
/// key at the start of each run; a gf_check call keeps the earlier calls'
/// keys (`recheck`) only where nothing but a rollback of the calls' own
/// writes could have changed the table unseen (`RunOutput.begin`), and its
/// first lookup then reads the table's greatest key: keys are given in
/// increasing order (SQLite's max + 1) and a rollback undoes the newest
/// changes first, so a rollback that took any key took the greatest one
/// given, and the greatest key is no longer the one last read or given
/// here. Past a key of 2^63 - 1 SQLite gives keys at random: a key given
/// below the greatest makes the next call forget them all.
///
/// Ids are told apart by their bytes, as SQLite tells them: Swift's `==`
/// takes "é" and "e\u{301}" for one string, so a remembered key is used only
/// for the very bytes it was found for.
final class OutputKeys {
    private let find, give, greatestKey: Statement
    private let db: Connection
    /// The table's greatest key, as last read or given here (nil: not read).
    private var greatest: Int64?
    /// False from `recheck` until the next lookup has compared `greatest` with the table.
    private var checked = true
    /// A key was given below the greatest one (SQLite's keys past 2^63 - 1): a
    /// rollback could take it and leave the greatest as it was.
    private var givenOutOfOrder = false
    /// At most this many keys are remembered by a gf_check session (a long
    /// session meets ever new subjects), and by a batch run (whose keys go
    /// at its end; a million fences' areas notify in one run).
    static let rememberedInSession = 1 << 16, rememberedInRun = 1 << 21
    /// A batch run (`forRun`) reads the whole table once the ids it has
    /// found in it one by one are at least this many, and at least an eighth
    /// of the table (by the span of its keys, which bounds its rows): a run
    /// judged again over a large catalog finds most of its areas' keys there,
    /// one statement each on the thread that writes, where a scan reads a row
    /// for a fraction of a statement; a run that meets a small part of a
    /// large table (a day's subjects among years of them) goes on finding
    /// its own. Checked again each time the count doubles. A gf_check session
    /// never reads whole: its memory follows the areas its calls meet.
    static let foundBeforeReadingAll = 4_096
    /// Whether the keys serve a batch run (`rememberedInRun`, the table read whole) rather than gf_check calls.
    private var forRun = false
    private var foundOneByOne = 0
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
    /// Whether the last id not remembered here was new to the table (given
    /// a key) rather than found in it: the next such id is tried the same way first.
    private var lastMissWasNew = false
    /// Whether an id may be inserted before it is looked up: the table has
    /// its UNIQUE id (the insert of a known id then inserts nothing) and no
    /// trigger (a user's BEFORE INSERT trigger would run for an id the table
    /// holds). Found when the keys are made: a trigger created later changes
    /// the schema, after which gf_check's session and every run make new ones.
    private let insertsFirst: Bool

    private let all: String
    private let span: Statement

    /// `table` maps its TEXT column `id` (UNIQUE) to its INTEGER PRIMARY KEY `key`.
    init(_ db: Connection, table: String, key: String, id: String) throws {
        find = try db.prepare("SELECT \(key) FROM \(table) WHERE \(id) = ?")
        all = "SELECT \(key), \(id) FROM \(table)"
        // Each bound in a query of its own: SQLite seeks a lone min() or max() in
        // the key's order, and scans the whole table for the two together.
        span = try db.prepare("SELECT (SELECT max(\(key)) FROM \(table)) - (SELECT min(\(key)) FROM \(table)) + 1")
        // The key is the new row's rowid (an INTEGER PRIMARY KEY): read from
        // the connection, not by RETURNING, which gathers its rows in a table
        // of their own first (a third of the insert's cost).
        let name = table.split(separator: ".").last.map(String.init) ?? table
        if try !Self.hasTriggers(db, on: name),
           let conflictFree = try? db.prepare("INSERT INTO \(table) (\(id)) VALUES (?) ON CONFLICT (\(id)) DO NOTHING") {
            (give, insertsFirst) = (conflictFree, true)
        } else {
            (give, insertsFirst) = (try db.prepare("INSERT INTO \(table) (\(id)) VALUES (?)"), false)
        }
        self.db = db
        greatestKey = try db.prepare("SELECT max(\(key)) FROM \(table)")
    }

    /// Whether a trigger (main's or a TEMP one) is defined on main's table `name`.
    private static func hasTriggers(_ db: Connection, on name: String) throws -> Bool {
        try db.scalar("""
            SELECT EXISTS (SELECT 1 FROM main.sqlite_master WHERE type = 'trigger' AND lower(tbl_name) = lower(?1))
                OR EXISTS (SELECT 1 FROM temp.sqlite_master WHERE type = 'trigger' AND lower(tbl_name) = lower(?1))
            """, [.text(name)]).int64 == 1
    }

    /// The key of `id`, given now if it has none.
    func key(of id: String) throws -> Int64 {
        if !checked { try checkRemembered() }
        if let last, KeysByBytes.same(last.id, id) { return last.key }
        if let k = known[id] { last = (id, k); return k }
        // The order the last miss found right: ids new to the table come in
        // runs (a fresh catalog's areas notifying for the first time) and so
        // do known ones (a run judged again), and the insert of a known id
        // gives nothing, as the lookup of a new one finds nothing.
        let insertFirst = insertsFirst && lastMissWasNew
        var k = try insertFirst ? given(id) : found(id)
        lastMissWasNew = insertFirst && k != nil
        if k == nil {
            k = try insertFirst ? found(id) : given(id)
            lastMissWasNew = !insertFirst && k != nil
        }
        if lastMissWasNew, let k {
            if let g = greatest, k <= g { givenOutOfOrder = true }
            greatest = max(greatest ?? k, k)
        }
        guard let k else { throw CatalogError("no key could be given to \(Echo.quoted(id)) in its dictionary") }
        if known.count >= (forRun ? Self.rememberedInRun : Self.rememberedInSession) { forget() }
        known[id] = k
        if forRun && !lastMissWasNew {
            foundOneByOne += 1
            if foundOneByOne >= Self.foundBeforeReadingAll && foundOneByOne & (foundOneByOne - 1) == 0 { try readAllIfItRepays() }
        }
        last = (id, k)
        return k
    }

    /// The key of `id`, whose slot in the run's grid is `slot` (-1: none).
    func key(of id: String, slot: Int32) throws -> Int64 {
        guard slot >= 0 else { return try key(of: id) }
        if !checked { try checkRemembered() }
        let i = Int(slot)
        if i < bySlot.count, let hit = bySlot[i], KeysByBytes.same(hit.id, id) { return hit.key }
        let k = try key(of: id)
        if i >= bySlot.count { bySlot.append(contentsOf: repeatElement(nil, count: i + 1 - bySlot.count)) }
        bySlot[i] = (id, k)
        return k
    }

    /// Keeps the keys remembered, to be checked against the table at the
    /// next lookup: for a gf_check call after an earlier one of the same
    /// session, where no statement but a rollback changed the table since
    /// (`RunOutput.begin`).
    func recheck() { checked = false }

    /// Whether the keys kept must still be compared with the table (`recheck`).
    var isUnchecked: Bool { !checked }

    /// The keys kept stand without comparing: the caller has seen that
    /// nothing the calls wrote since they were given was rolled back
    /// (`RunOutput.confirmKeys`). Not after a key given below the greatest,
    /// which only the table's comparison lets go of.
    func confirm() {
        if !givenOutOfOrder { checked = true }
    }

    /// Forgets every key if the table's greatest key is not the one last read or given here.
    private func checkRemembered() throws {
        checked = true
        try greatestKey.bind([])
        defer { greatestKey.reset() }
        let now = try greatestKey.step() ? greatestKey.value(0).int64 : nil
        if now != greatest || givenOutOfOrder { forget() }
        greatest = now
        givenOutOfOrder = false
    }

    /// Forgets every key found: the next transaction looks them up again.
    /// `run`: they will serve a batch run (`forRun`), else gf_check calls.
    func forget(run: Bool) {
        forRun = run
        forget()
    }

    /// Forgets every key found, serving the same kind of caller.
    func forget() {
        known.removeAll()
        last = nil
        bySlot.removeAll(keepingCapacity: true)
        foundOneByOne = 0
    }

    /// Remembers every key of the table (`foundBeforeReadingAll`) when the
    /// run has found at least an eighth of it one by one and it fits beside
    /// the keys remembered: one pass over it instead of a statement per id.
    /// An id whose bytes are not UTF-8 is left out (read into a String it
    /// would be repaired, and could stand for another id); its lookup finds it.
    private func readAllIfItRepays() throws {
        try span.bind([])
        let rows: Int64
        do {
            defer { span.reset() }
            // No rows, or keys so far apart that the span is not an integer: nothing to gain.
            guard try span.step(), case .integer(let n) = span.value(0) else { return }
            rows = n
        }
        guard rows <= Int64(foundOneByOne) * 8, rows <= Int64(Self.rememberedInRun - known.count) else { return }
        let s = try db.prepare(all)
        while try s.step() {
            guard !s.isMalformedText(1), case .integer(let k) = s.value(0), case .text(let id) = s.value(1) else { continue }
            known[id] = k
        }
    }
    /// The key the table holds for `id`; nil if it holds none.
    private func found(_ id: String) throws -> Int64? {
        try find.bind(text: id, at: 1)
        // Reset at once: a statement left on its row holds its table open.
        defer { find.reset() }
        guard try find.step() else { return nil }
        return find.value(0).int64
    }

    /// The key given to `id` now; nil if the table holds `id` already (nothing is inserted then).
    private func given(_ id: String) throws -> Int64? {
        try give.bind(text: id, at: 1)
        defer { give.reset() }
        while try give.step() {}
        // Direct changes only: a row a trigger of the user's inserts is not counted, nor its rowid kept.
        return db.changes == 1 ? db.lastInsertRowid : nil
    }
}
