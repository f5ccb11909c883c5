import ArgumentParser
import GeofenceCore
import GeofenceSQL

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Show or change database settings.",
        discussion: "Settable keys:\n" + Settings.known.map { "  \($0.key): \($0.help)" }.joined(separator: "\n"))
    @Argument(help: "The database file.") var db: String
    @Argument(help: "A setting's key: show just that one.") var key: String?
    @Argument(help: "A new value for KEY.") var value: String?
    @Flag(help: "Remove KEY (a positioning_*, power_saving, monitor_*, region_* or retention_* setting), so its default applies.") var unset = false
    @OptionGroup var output: OutputOptions

    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let settings = Settings(conn)
            // Each change is a transaction of its own, so a signal rolls it back or lets it finish.
            if unset {
                guard let k = key, value == nil else { throw ValidationError("--unset takes a KEY and no VALUE") }
                try conn.transaction { try settings.unset(k) }
                print("\(k) unset")
                return
            }
            switch (key, value) {
            case (let k?, let v?):
                try conn.transaction { try settings.set(k, v) }
                print("\(k) = \(v)")
            case (let k?, nil):
                guard try settings.all().contains(where: { $0.0 == k }) else { throw InputError("unknown setting", field: k) }
                print(try settings.get(k) ?? "")
            default:
                output.print(columns: ["key", "value"], rows: try settings.all().map { [$0.0, $0.1] })
            }
        }
    }
}
