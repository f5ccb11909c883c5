import ArgumentParser
import GeofenceHost
import GeofenceSQL

struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a geofence catalog (a SpatiaLite database) in DB.",
        discussion: "DB may be new, empty, or an existing SpatiaLite database without a catalog.")

    @Argument(help: "The database file.")
    var db: String

    func run() throws {
        try reporting {
            let conn = try Database.open(db, create: true)
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
