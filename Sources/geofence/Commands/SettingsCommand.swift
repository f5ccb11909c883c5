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
    @OptionGroup var output: OutputOptions

    func run() throws {
        try reporting {
            let settings = Settings(try openCatalog(db))
            switch (key, value) {
            case (let k?, let v?):
                try settings.set(k, v)
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
