import ArgumentParser
import GeofenceSQL

struct Clear: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove all areas and conditions (the seed's clearAllInformation). Settings stay.")
    @Argument(help: "The database file.") var db: String
    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let (areas, conditions) = try conn.transaction {
                let c = try conn.scalar("SELECT count(*) FROM gf_conditions").int64 ?? 0
                let a = try conn.scalar("SELECT count(*) FROM gf_areas").int64 ?? 0
                try AreaStore(conn).removeAll()
                return (a, c)
            }
            print("removed \(counted(areas, "area")) and \(counted(conditions, "condition"))")
        }
    }
}
