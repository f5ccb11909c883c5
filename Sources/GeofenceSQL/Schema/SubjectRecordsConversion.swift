import GeofenceCore

/// Schema version 8's conversion (sql/008_subject_records.sql): each
/// subject's state, held until then in gf_subjects, gf_stay_rows and
/// gf_last_notified, becomes one record in gf_subject_state
/// (`SubjectRecord`), and its INSIDE stays rows of gf_inside. The state is
/// read exactly as the store of versions 4 to 7 read it (`LegacyStateRows`):
/// streaks made exact from base_judged, the last-notified days of
/// conditions with a suppression only (no rule reads the others).
enum SubjectRecordsConversion: SchemaConversion {
    static let replacedTables = [
        ReplacedTable(name: "gf_subjects", replacement: "now a view over gf_subject_state, one JSON record per subject; "
                      + "a trigger can watch gf_subject_state instead, or read gf_subjects after each run"),
        ReplacedTable(name: "gf_stay_rows", replacement: "gone: stays are in each subject's record in gf_subject_state, "
                      + "read through the gf_stays view; gf_inside holds the INSIDE ones by area"),
        ReplacedTable(name: "gf_stays", replacement: "now a view over the records in gf_subject_state; "
                      + "gf_inside (area_id, subject_id) holds who is inside each area"),
    ]

    /// Writes every subject's record and its gf_inside rows, in subject order.
    static func convert(_ db: Connection) throws {
        let rows = try LegacyStateRows(db)
        let suppressing = Set(try db.query("SELECT condition_id FROM gf_conditions WHERE renotify_suppress_days > 0").compactMap { $0[0].int64 })
        let saveRecord = try db.prepare("INSERT INTO gf_subject_state (subject_id, record) VALUES (?, ?)")
        let saveInside = try db.prepare("INSERT INTO gf_inside (area_id, subject_id) VALUES (?, ?)")
        let subjects = try db.query("SELECT subject_id FROM gf_subjects ORDER BY subject_id").compactMap { $0[0].string }
        for subject in subjects {
            var state = try rows.load(subject)
            state.lastNotifiedDay = state.lastNotifiedDay.filter { suppressing.contains($0.key) }
            try saveRecord.run([.text(subject), .text(SubjectRecord.encode(state))])
            for (area, stay) in state.stays where stay.phase == .inside {
                try saveInside.run([.text(area), .text(subject)])
            }
        }
        if let orphan = try db.scalar("""
            SELECT subject_id FROM gf_stay_rows WHERE subject_id NOT IN (SELECT subject_id FROM gf_subjects) ORDER BY subject_id LIMIT 1
            """).string {
            throw LegacyStateRows.refusal("gf_stay_rows holds stays of subject \(Echo.quoted(orphan)), which gf_subjects does not have")
        }
    }
}

/// The state of one subject as versions 4 to 7 stored it: gf_subjects (last
/// fix, judged_fixes), gf_stay_rows (streaks as of base_judged) and
/// gf_last_notified (days of conditions with a suppression). Rows no version
/// writes are refused with the subject and column named.
struct LegacyStateRows {
    private let loadSubject, loadStays: Statement
    /// The days of conditions with a suppression, by subject: read in one
    /// pass, since gf_last_notified may be a view grouping every
    /// notification (version 7), which a per-subject query would group again
    /// for each subject.
    private let days: [String: [(Int64, Int)]]

    init(_ db: Connection) throws {
        loadSubject = try db.prepare("SELECT last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes FROM gf_subjects WHERE subject_id = ?")
        loadStays = try db.prepare("""
            SELECT area_id, state, in_base, out_base, base_judged, entered_at, dwell_spent FROM gf_stay_rows WHERE subject_id = ?
            """)
        // Version 7's view gives the days of the notifications still stored;
        // version 6's table, kept aside by version 7's upgrade when the
        // catalog came from 6, also kept the days of notifications deleted
        // since (a pruned log): its day stands where it has one.
        let keptAside = try db.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'gf_last_notified_v6'").int64 == 1
        var byCondition: [String: [Int64: Int]] = [:]
        for table in ["gf_last_notified"] + (keptAside ? ["gf_last_notified_v6"] : []) {
            for row in try db.query("""
                SELECT n.subject_id, n.condition_id, n.local_date FROM \(table) AS n JOIN gf_conditions AS c ON c.condition_id = n.condition_id
                WHERE c.renotify_suppress_days > 0
                """) {
                if let subject = row[0].string, let id = row[1].int64, let day = CivilDate.parseStored(row[2].string ?? "") {
                    byCondition[subject, default: [:]][id] = day
                }
            }
        }
        self.days = byCondition.mapValues { $0.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }

    /// The subject's state as the store of versions 4 to 7 loaded it.
    func load(_ subject: String) throws -> SubjectState {
        var s = SubjectState(subjectId: subject)
        try loadSubject.bind([.text(subject)])
        defer { loadSubject.reset() }
        if try loadSubject.step() {
            let row = loadSubject
            let ts = try Self.time(row.value(0), "gf_subjects.last_ts", of: subject)
            s.lastFix = Fix(subjectId: subject, ts: ts, lat: row.value(1).double ?? 0, lon: row.value(2).double ?? 0,
                            accuracy: row.value(3).double ?? 0)
            s.judgedFixes = try Self.count(row.value(4), "gf_subjects.judged_fixes", of: subject)
        }
        try loadStays.bind([.text(subject)])
        defer { loadStays.reset() }
        while try loadStays.step() {
            try readStay(loadStays, into: &s)
        }
        for (id, day) in days[subject] ?? [] { s.lastNotifiedDay[id] = day }
        return s
    }

    /// One gf_stay_rows row (columns as `loadStays` selects them) into the
    /// subject's stays, its streaks made exact: the row holds them as of its
    /// base_judged-th fix, and the streak under way grew by one per judged fix since.
    private func readStay(_ row: Statement, into s: inout SubjectState) throws {
        let subject = s.subjectId
        guard let last = s.lastFix?.ts else {
            throw Self.refusal("gf_stay_rows holds stays of subject \(Echo.quoted(subject)), which gf_subjects does not have")
        }
        var stored = StayState()
        stored.phase = StayState.Phase(rawValue: row.value(1).string ?? "") ?? .unknown
        stored.inStreak = try Self.count(row.value(2), "gf_stay_rows.in_base", of: subject)
        stored.outStreak = try Self.count(row.value(3), "gf_stay_rows.out_base", of: subject)
        let entered = row.value(5)
        stored.enteredAt = entered.isNull ? nil : try Self.time(entered, "gf_stay_rows.entered_at", of: subject)
        if let entered = stored.enteredAt, last < entered {
            throw Self.refusal("gf_stay_rows.entered_at of subject \(Echo.quoted(subject)) is \(entered.iso8601), after its last judged fix "
                               + "(\(last.iso8601))")
        }
        stored.dwellSpent = (row.value(6).string ?? "").split(separator: ",").compactMap { Int64($0) }
        let base = try Self.count(row.value(4), "gf_stay_rows.base_judged", of: subject)
        guard base <= s.judgedFixes else {
            throw Self.refusal("gf_stay_rows.base_judged of subject \(Echo.quoted(subject)) is \(base), past the \(s.judgedFixes) fixes "
                               + "gf_subjects says it has judged")
        }
        s.stays[row.value(0).string ?? ""] = stored.continued(by: max(0, s.judgedFixes - base))
    }

    /// Why the upgrade stops: rows no version of the engine writes, edited by hand.
    static func refusal(_ what: String) -> CatalogError {
        CatalogError("upgrading the subject state: \(what); the rows were edited by hand. Nothing was changed: delete that subject's rows "
                     + "from gf_subjects, gf_stay_rows and gf_last_notified (with sqlite3), then open the catalog again")
    }

    /// A stored count of fixes: 0 to 2^53.
    static func count(_ v: SQLiteValue, _ column: String, of subject: String) throws -> Int {
        guard let n = v.int64 ?? (v.isNull ? 0 : nil), (0...(Int64(1) << 53)).contains(n) else {
            throw refusal("\(column) of subject \(Echo.quoted(subject)) is \(Echo.plain(v.string ?? "a BLOB")), not a count of judged fixes (0 to 2^53)")
        }
        return Int(n)
    }

    /// A stored time.
    static func time(_ v: SQLiteValue, _ column: String, of subject: String) throws -> Timestamp {
        do { return try Timestamp.parse(v.string ?? "") } catch {
            throw refusal("\(column) of subject \(Echo.quoted(subject)) is not a time: \(error)")
        }
    }
}
