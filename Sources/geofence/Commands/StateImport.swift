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
        /// throws, located by file and line (`StateLines.read`): the caller rolls back.
        static func read(_ input: UnsafeMutablePointer<FILE>, _ name: String, into transfer: StateTransfer,
                         replace: Bool) throws -> (Int, Int) {
            var imported = 0, replaced = 0
            try StateLines.read(input, name) { checked, at in
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
    }
}
