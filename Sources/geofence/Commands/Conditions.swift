import ArgumentParser
import GeofenceCore
import GeofenceSQL

struct Conditions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, show, add, remove and import notification conditions.",
        subcommands: [List.self, Show.self, Add.self, Remove.self, ImportCSV.self])

    static let numeric: Set<String> = ["condition_id", "dwell_s", "renotify_suppress_days"]

    static func row(_ c: ConditionDefinition) -> [String?] {
        [String(c.conditionId), c.areaId, c.timing.rawValue, c.dwellSeconds.map(String.init), c.weekdays?.description,
         c.startMinute.map(ConditionDefinition.formatTime), c.endMinute.map(ConditionDefinition.formatTime),
         c.startDay.map(ConditionDefinition.formatDate), c.endDay.map(ConditionDefinition.formatDate),
         c.renotifySuppressDays.map(String.init), c.timezone]
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List conditions, ordered by id.")
        @Argument(help: "The database file.") var db: String
        @Option(help: "Only conditions of this area.") var area: String?
        @OptionGroup var output: OutputOptions
        func run() throws {
            try reporting {
                let rows = try ConditionStore(openCatalog(db)).all(area: area).map(Conditions.row)
                output.print(columns: ConditionText.columns, rows: rows, numeric: Conditions.numeric)
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one condition.")
        @Argument(help: "The database file.") var db: String
        @Argument(help: "The condition id.") var id: Int64
        @OptionGroup var output: OutputOptions
        func run() throws {
            try reporting {
                guard let c = try ConditionStore(openCatalog(db)).get(id) else { throw InputError("no such condition", id: String(id)) }
                output.print(columns: ConditionText.columns, rows: [Conditions.row(c)], numeric: Conditions.numeric)
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a condition to an existing area.",
            discussion: "Example: geofence conditions add fences.db --area station --timing IN --weekdays Mon,Tue --start-time 09:00 --end-time 18:00")
        @Argument(help: "The database file.") var db: String
        @Option(parsing: .unconditional, help: "The condition id; default: one more than the highest.") var id: Int64?
        @Option(help: "The area it watches.") var area: String
        @Option(help: "IN, OUT or DWELL.") var timing: String
        @Option(parsing: .unconditional, help: "For DWELL: seconds inside before it fires.") var dwellS: Int64?
        @Option(help: "Local weekdays it may fire on, e.g. Mon,Tue; default: every day.") var weekdays: String?
        @Option(help: "Daily window start, local HH:MM (included).") var startTime: String?
        @Option(help: "Daily window end, local HH:MM (excluded); before the start wraps midnight.") var endTime: String?
        @Option(help: "First local date it may fire, YYYY-MM-DD.") var startDate: String?
        @Option(help: "Last local date it may fire, YYYY-MM-DD.") var endDate: String?
        @Option(parsing: .unconditional, help: "Days of silence after a notification (1 = at most once a day); default: none.") var renotifySuppressDays: Int?
        @Option(help: "IANA time zone; default: the area's, else the database's default_timezone.") var timezone: String?

        func run() throws {
            try reporting {
                let conn = try openCatalog(db)
                let store = ConditionStore(conn)
                // One transaction: the next free id is still free when the condition is stored.
                let cid = try conn.transaction { () -> Int64 in
                    let cid = try id ?? store.nextId()
                    var fields: [String: String] = ["condition_id": String(cid), "area_id": area, "timing": timing]
                    fields["dwell_s"] = dwellS.map(String.init); fields["weekdays"] = weekdays
                    fields["start_time"] = startTime; fields["end_time"] = endTime
                    fields["start_date"] = startDate; fields["end_date"] = endDate
                    fields["renotify_suppress_days"] = renotifySuppressDays.map(String.init); fields["timezone"] = timezone
                    do {
                        try store.insert(try ConditionText.condition(fields))
                    } catch var e as InputError {
                        // The values are this command's options: errors name the option, not the CSV column.
                        if let field = e.field {
                            e.field = field == "area_id" ? "--area" : field == "condition_id" ? "--id" : "--" + String(field.map { $0 == "_" ? "-" : $0 })
                        }
                        if id == nil { e.id = nil }   // an id the user did not give
                        throw e
                    }
                    return cid
                }
                print("added condition \(cid)")
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove conditions.")
        @Argument(help: "The database file.") var db: String
        @Argument(help: "The condition ids.") var ids: [Int64]
        func run() throws {
            try reporting {
                // An id given twice is one condition, removed once.
                var seen = Set<Int64>()
                let distinct = ids.filter { seen.insert($0).inserted }
                let conn = try openCatalog(db)
                try conn.transaction {
                    let store = ConditionStore(conn)
                    for id in distinct where try !store.remove(id) { throw InputError("no such condition (nothing removed)", id: String(id)) }
                }
                print("removed \(counted(distinct.count, "condition"))")
            }
        }
    }

    struct ImportCSV: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import conditions from CSV, all or nothing.",
            discussion: "Columns (header row, any order): \(ConditionText.columns.joined(separator: ", ")). Empty = unset.")
        @Argument(help: "The database file.") var db: String
        @Argument(help: "The CSV file.") var file: String
        func run() throws {
            try reporting {
                let conn = try openCatalog(db)
                let rows = try CSVFile.read(path: file)
                // Column names without spaces at their ends (`condition_id, area_id`), as a fixes file's.
                guard let header = rows.first?.map({ $0.trimmingEdgeSpaces() }) else {
                    throw InputError("empty file: expected a header row", file: file)
                }
                let unknown = header.filter { !ConditionText.columns.contains($0) }
                if !unknown.isEmpty {
                    let empty = unknown.contains("") ? "; a column with no name: a comma at the header's end?" : ""
                    throw InputError("unknown column(s) \(unknown.map(Echo.quoted).joined(separator: ", ")) (columns: \(ConditionText.columns.joined(separator: ", ")))"
                                     + CSVReader.separatorHint(header: header) + empty, file: file, item: "header")
                }
                // Two columns of one name: which holds the value is anyone's guess.
                if let twice = header.first(where: { c in header.filter { $0 == c }.count > 1 }) {
                    throw InputError("the header names column \(Echo.quoted(twice)) twice", file: file, item: "header")
                }
                for required in ["condition_id", "area_id", "timing"] where !header.contains(required) {
                    throw InputError("missing column \(required)", file: file, item: "header")
                }
                let store = ConditionStore(conn)
                var imported = 0
                try conn.transaction {
                    for (i, row) in rows.dropFirst().enumerated() {
                        if row.count == 1 && row[0].isEmpty { continue }   // a blank line: nothing to count
                        imported += 1
                        guard row.count == header.count else {
                            throw InputError("has \(row.count) fields, the header has \(header.count)", file: file, item: "row \(i + 1)")
                        }
                        do {
                            // The area id as written, quoted or not (RFC 4180; the tools that write CSV quote ` A` only when asked).
                            try store.insert(try ConditionText.condition(Dictionary(uniqueKeysWithValues: zip(header, row))))
                        } catch let e as InputError {
                            throw e.located(file: file, item: "row \(i + 1)")
                        }
                    }
                }
                print("imported \(counted(imported, "condition"))")
            }
        }
    }
}
