import ArgumentParser
import GeofenceCore
import GeofenceSQL

struct Nearest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The areas nearest to a position, by distance to their boundary (0 inside).",
        discussion: "The same answer as SELECT * FROM gf_nearest(lat, lon, n [, at]).")
    @Argument(help: "The database file.") var db: String
    @Option(parsing: .unconditional, help: "Latitude in degrees.", transform: decimalOption) var lat: Double
    @Option(parsing: .unconditional, help: "Longitude in degrees.", transform: decimalOption) var lon: Double
    @Option(name: .short, parsing: .unconditional, help: "How many areas.") var n: Int = 20
    @Option(parsing: .unconditional, help: "Only areas valid at this time (ISO 8601 with offset, or Unix seconds).") var at: String?
    @OptionGroup var output: OutputOptions

    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let p = try checkedPosition(lat: lat, lon: lon)
            guard (1...10_000).contains(n) else { throw InputError("must be from 1 to 10000, got \(n)", field: "-n") }
            let time = try at.map { try parseTime($0, field: "--at") }
            let rows = try NearestAreas(conn).nearest(to: p, count: n, at: time)
            output.print(columns: ["rank", "area_id", "distance_m"],
                         rows: rows.enumerated().map { [String($0.offset + 1), $0.element.areaId, String(format2: $0.element.distanceM)] },
                         numeric: ["rank", "distance_m"])
        }
    }
}

struct Regions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Region payloads for a phone: the nearest areas as circles, plus a re-sync region.",
        discussion: """
            Prints JSON: the areas and their distances, iOS CLCircularRegion fields and Android \
            Geofence.Builder fields. The re-sync region is centred on the position and ends just short \
            of the next-nearest area; leaving it means asking for a new plan. Radii follow the \
            region_* settings; --speed caps the re-sync radius by the power-saving wake-up radius \
            for that speed. The same JSON as SELECT gf_regions(lat, lon, n, speed, at).
            """)
    enum Platform: String, ExpressibleByArgument, CaseIterable { case both, ios, android }
    @Argument(help: "The database file.") var db: String
    @Option(parsing: .unconditional, help: "Latitude in degrees.", transform: decimalOption) var lat: Double
    @Option(parsing: .unconditional, help: "Longitude in degrees.", transform: decimalOption) var lon: Double
    @Option(name: .short, parsing: .unconditional, help: "How many areas (iOS watches 20 regions per app, Android 100; one goes to re-sync).") var n: Int = 19
    @Option(parsing: .unconditional, help: "The device's speed in m/s.", transform: decimalOption) var speed: Double?
    @Option(parsing: .unconditional, help: "Plan for this time: only areas valid then, expirations counted from it.") var at: String?
    @Option(help: "Which payload to print: both (with the distances), ios or android.") var platform: Platform = .both

    func run() throws {
        try reporting {
            let conn = try openCatalog(db)
            let p = try checkedPosition(lat: lat, lon: lon)
            guard (1...10_000).contains(n) else { throw InputError("must be from 1 to 10000, got \(n)", field: "-n") }
            if let s = speed, !(s >= 0 && s.isFinite) { throw InputError("must be >= 0 m/s, got \(s)", field: "--speed") }
            let time = try at.map { try parseTime($0, field: "--at") }
            let plan = try DeviceRegions.plan(conn, search: NearestAreas(conn), at: p, count: n, speedMps: speed, time: time)
            switch platform {
            case .both: print(plan.json.serialized)
            case .ios: print(plan.iosJSON.serialized)
            case .android: print(plan.androidJSON.serialized)
            }
        }
    }
}

struct Positioning: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "What a phone should run now: standard or significant-change positioning, accuracy tier, wake-up radius.",
        discussion: "Uses the positioning_* , power_saving and monitor_* settings (see `geofence settings`). Same JSON as gf_positioning(speed, battery).")
    @Argument(help: "The database file.") var db: String
    @Option(parsing: .unconditional, help: "The device's speed in m/s.", transform: decimalOption) var speed: Double?
    @Option(parsing: .unconditional, help: "Battery level in percent.", transform: decimalOption) var battery: Double?

    func run() throws {
        try reporting {
            if let s = speed, !(s >= 0 && s.isFinite) { throw InputError("must be >= 0 m/s, got \(s)", field: "--speed") }
            if let b = battery, !(0...100).contains(b) { throw InputError("must be from 0 to 100, got \(b)", field: "--battery") }
            let settings = try Settings(try openCatalog(db)).positioning()
            print(settings.decide(speedMps: speed, batteryPct: battery).json.serialized)
        }
    }
}
