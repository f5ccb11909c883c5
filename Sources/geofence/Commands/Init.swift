import ArgumentParser
import GeofenceCore
import GeofenceHost
import GeofenceSQL

struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a geofence catalog (a SpatiaLite database) in DB.",
        discussion: """
            DB may be new, empty, or an existing SpatiaLite database without a catalog. \
            --page-size 32768 suits a catalog judged in batches (fewer, larger writes for \
            millions of rows); SQLite's 4096 suits one fix per call (each commit writes whole pages).
            """)

    @Argument(help: "The database file.")
    var db: String

    @Option(help: ArgumentHelp(
        "SQLite's page size for a new or empty file, in bytes: a power of two from 512 to 65536 "
            + "(default: SQLite's, 4096). A database that already holds pages keeps its own.",
        valueName: "bytes"))
    var pageSize: Int?

    func validate() throws {
        if let n = pageSize, n < 512 || n > 65536 || n & (n - 1) != 0 {
            throw ValidationError("--page-size \(n): SQLite's page size is a power of two from 512 to 65536")
        }
    }

    func run() throws {
        try reporting {
            let conn = try Database.open(db, create: true)
            // A page size holds only if set while the file has no page, and
            // before WAL mode; a database with pages would silently keep its
            // own, so asking for another is refused before anything is written.
            if let n = pageSize {
                if try conn.scalar("PRAGMA page_count").int64 == 0 {
                    try conn.execute("PRAGMA page_size = \(n)")
                } else if let had = try conn.scalar("PRAGMA page_size").int64, had != Int64(n) {
                    throw InputError("\(db) already holds pages of \(had) bytes, and SQLite sets the page size only on an "
                                     + "empty file: run init without --page-size, or rewrite the file first with "
                                     + "`sqlite3 \(Echo.shellWord(db)) 'PRAGMA journal_mode = DELETE; PRAGMA page_size = \(n); VACUUM'`")
                }
            }
            try conn.execute("PRAGMA journal_mode = WAL")
            try Schema.create(conn)
            print("created geofence catalog (schema version \(Schema.currentVersion)) in \(db)")
        }
    }
}

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the engine's version.")
    func run() { print("geofence \(GeofenceVersion.string) (catalog schema \(Schema.currentVersion))") }
}
