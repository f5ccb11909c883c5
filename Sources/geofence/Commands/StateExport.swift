import ArgumentParser
import GeofenceCore
import GeofenceSQL

extension State {
    /// `geofence state export`: every subject's state record (or the named
    /// subjects'), one JSON line each, in subject_id byte order, so that the
    /// same state gives the same bytes (docs/state.md).
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the subjects' state records as JSON lines, one per subject, in subject_id byte order.",
            discussion: """
                Each line is {"subject_id":ID,"record":RECORD}, RECORD being the subject's state record \
                (docs/subject-record.md) in its canonical form: the same state gives the same bytes, \
                whether it was built fix by fix by gf_check or in one batch by judge. A subject never \
                judged (or reset) has no record and no line. Lines come in the byte order of the \
                subject_id's UTF-8. `geofence state import` reads them back, into this catalog or \
                another of the same areas (docs/state.md).
                """)
        @Argument(help: "The database file.") var db: String
        @Option(help: "Only this subject; repeat it for several (a subject without state has no line).") var subject: [String] = []
        @Option(name: .shortAndLong,
                help: "Output file (- or none: standard output); a file is written whole beside its name and renamed over it, or left as it was.")
        var out: String?

        func validate() throws { try requireOutputName(out) }

        func run() throws {
            try reporting {
                let conn = try openCatalog(db)
                let output = try OutputFile(out == standardStream ? nil : out, database: conn)
                let transfer = try StateTransfer(conn)
                var count = 0
                var buffer: [UInt8] = []
                // One read transaction: every line from the same moment of the catalog.
                try conn.execute("BEGIN")
                defer { try? conn.execute("COMMIT") }
                try transfer.forEach(only: subject.isEmpty ? nil : subject) { id, text in
                    // Checked, and written as the engine writes it (a stored record already is).
                    let state = try SubjectRecord.decode(text, subject: id)
                    StateLines.line(id, SubjectRecord.encode(state), &buffer)
                    count += 1
                    if buffer.count >= 1 << 20 { try output.write(bytes: buffer); buffer.removeAll(keepingCapacity: true) }
                }
                try output.write(bytes: buffer)
                try output.commit()
                // Standard output holds the lines alone; a file's summary goes to standard error.
                if let out, out != standardStream { warn("exported the state of \(counted(count, "subject")) to \(out)") }
            }
        }
    }
}
