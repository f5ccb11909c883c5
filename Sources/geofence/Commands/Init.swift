import ArgumentParser
import GeofenceHost
import GeofenceSQL

struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a geofence catalog (a SpatiaLite database) in DB.",
        discussion: """
            DB may be new, empty, or an existing SpatiaLite database without a catalog. \
            A new or empty file gets 32 KiB pages; an existing database keeps its own.
            """)

    @Argument(help: "The database file.")
    var db: String

    func run() throws {
        try reporting {
            let conn = try Database.open(db, create: true)
            // Pages of 32 KiB, not SQLite's 4 KiB: a judgement appends millions
            // of notification and state rows, and larger pages mean fewer
            // splits, WAL frames and writes for the same rows. Reads and
            // containment are unchanged; benchmarks/results.md has the figures.
            // The size can be set only while the file holds no page, and only
            // before WAL mode, so a user's existing database keeps its own.
            if try conn.scalar("PRAGMA page_count").int64 == 0 {
                try conn.execute("PRAGMA page_size = 32768")
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
