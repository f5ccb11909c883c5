import ArgumentParser
import GeofenceSQL

@main
struct GeofenceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geofence",
        abstract: "A geofencing engine inside SQLite: fence catalogs, accuracy-aware containment, judgement.",
        discussion: "Every command takes the database file first. See README.md for the SQL functions.",
        version: GeofenceVersion.string,
        subcommands: [
            Init.self, Import.self, Areas.self, Conditions.self, Clear.self, SettingsCommand.self,
            Export.self, Locate.self, Nearest.self, Regions.self, Positioning.self, Check.self, Judge.self, Notifications.self, State.self, Reset.self, Version.self,
        ]
    )
}
