import ArgumentParser
import GeofenceCore
import GeofenceSQL
@preconcurrency import Glibc

extension State {
    /// `geofence state import`: subjects' state records, as `state export`
    /// writes them, put into a catalog in one transaction (docs/state.md).
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put subjects' state records (JSON lines, as state export writes them) into the catalog, all or nothing.",
            discussion: """
                Each line is {"subject_id":ID,"record":RECORD} (blank lines are skipped). Every line is \
                checked as the engine reads a stored record (docs/subject-record.md: its version, the \
                types of its members, counts from 0 to 2^53, coordinates within range, times); a bad \
                line is refused naming the file, the line and the subject, and nothing is written. The \
                import is one transaction. A subject that already has state in the catalog is refused \
                unless --replace; gf_inside (who is inside each area) is kept in step with the imported \
                INSIDE stays. Records are stored in canonical form, counters (judged) as they are. A \
                stay of an area the catalog lacks, and a last-notified day of a condition it lacks, \
                are kept as they are: the stay is hidden by gf_stays, and both leave the record at the \
                subject's next judged fix (docs/state.md).
                """)
        @Argument(help: "The database file.") var db: String
        @Argument(help: "The JSON lines file (as state export writes it), or - for standard input.") var file: String
        @Flag(help: "Replace the state of subjects that have some (their records and gf_inside rows) instead of refusing them.")
        var replace = false

        func run() throws {
            try reporting {
                let conn = try openCatalog(db)
                let shown = file == standardStream ? "standard input" : file
                // A stream is read to its end before the write lock is taken (as judge does with fixes).
                let spooled = try spooledFixes(file)
                guard let input = spooled.map({ fopen($0, "r") }) ?? (file == standardStream ? stdin : fopen(file, "r")) else {
                    throw InputError("cannot open: \(String(cString: strerror(errno)))", file: shown)
                }
                defer { if input != stdin { fclose(input) } }
                let (imported, replaced) = try conn.transaction { try Self.read(input, shown, into: StateTransfer(conn), replace: replace) }
                print("imported the state of \(counted(imported, "subject"))" + (replace ? " (\(replaced) replaced)" : ""))
            }
        }

        /// Reads every line of `input` (called `name`) and puts its record,
        /// inside the caller's transaction; returns how many were put and how
        /// many of those replaced a subject's state. The first bad line
        /// throws, located by file and line: the caller rolls back.
        static func read(_ input: UnsafeMutablePointer<FILE>, _ name: String, into transfer: StateTransfer,
                         replace: Bool) throws -> (Int, Int) {
            var line: UnsafeMutablePointer<CChar>?
            var capacity = 0
            defer { free(line) }
            var number = 0, imported = 0, replaced = 0
            // By the ids' bytes, as the catalog keys them: "café" composed and decomposed are two subjects.
            var seen = Set<SubjectKey>()
            while true {
                let n = getline(&line, &capacity, input)
                if n < 0 {
                    if ferror(input) != 0 { throw InputError("read error: \(String(cString: strerror(errno)))", file: name) }
                    break
                }
                number += 1
                let bytes = UnsafeRawBufferPointer(start: line, count: n)
                let at = "line \(number)"
                guard let text = String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) else {
                    throw InputError("is not UTF-8 text", file: name, item: at)
                }
                if text.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { continue }
                let checked: StateTransfer.Checked
                do { checked = try Self.checked(text) } catch let e as InputError { throw e.located(file: name, item: at) }
                guard seen.insert(SubjectKey(checked.subject)).inserted else {
                    throw InputError("subject \(Echo.quoted(checked.subject)) has a line above already: one line per subject", file: name, item: at)
                }
                let had = try transfer.record(of: checked.subject) != nil
                guard try transfer.put(checked, replace: replace) else {
                    throw InputError("subject \(Echo.quoted(checked.subject)) already has state in this catalog: --replace replaces it",
                                     file: name, item: at)
                }
                imported += 1
                if had { replaced += 1 }
                if imported % 10_000 == 0 { TestStops.reach(.chunk) }
            }
            if imported % 10_000 != 0 { TestStops.reach(.chunk) }
            return (imported, replaced)
        }

        /// One line's subject and record, checked (`StateTransfer.check`).
        static func checked(_ text: String) throws -> StateTransfer.Checked {
            let value: JSONValue
            do { value = try JSONReader.parse(text) } catch {
                throw InputError("is not a JSON object {\"subject_id\":…,\"record\":…} (\(error))")
            }
            guard case .object(let members) = value else {
                throw InputError("is a JSON \(value.typeName), not an object {\"subject_id\":…,\"record\":…}")
            }
            var subject: String?, record: JSONValue?
            for (key, member) in members {
                switch key {
                case "subject_id" where subject == nil:
                    guard case .string(let s) = member else { throw InputError("has a subject_id of type \(member.typeName), not a string") }
                    subject = s
                case "record" where record == nil:
                    record = member
                case "subject_id", "record":
                    throw InputError("has two members \(Echo.quoted(key))")
                default:
                    throw InputError("has a member \(Echo.quoted(key)), which a state line does not have (only subject_id and record)")
                }
            }
            guard let subject else { throw InputError("has no subject_id") }
            guard let record, case .object = record else {
                throw InputError("has no \"record\" object for subject \(Echo.quoted(subject))")
            }
            return try StateTransfer.check(subject: subject, record: record)
        }
    }
}
