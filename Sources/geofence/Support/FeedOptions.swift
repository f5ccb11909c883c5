import ArgumentParser
import GeofenceCore
import GeofenceSQL

/// The options that describe fixes as the user's feed has them (`FixFeed`):
/// their own column names and a stand-in for a missing accuracy (judge,
/// locate), and the unit of numeric times (judge, check). Each command
/// builds its one `FixFeed` from these and the catalog, and hands it to
/// every reader, so a mapping means the same for a file, standard input
/// and a table.
struct FeedColumnOptions: ParsableArguments {
    @Option(name: .customLong("columns"), help: ArgumentHelp("The fixes' own column names (CSV header, NDJSON keys, --table columns) as FIELD=COLUMN pairs, "
                               + "e.g. subject_id=device_id,lat=latitude,lon=longitude,ts=timestamp,accuracy_m=acc; "
                               + "a field not listed keeps its own name. May be given more than once; a column name may hold commas.",
                               valueName: "MAPPING"))
    var columnMappings: [String] = []
    /// Every --columns given, as one mapping.
    var columns: String? { columnMappings.isEmpty ? nil : columnMappings.joined(separator: ",") }
    @Option(parsing: .unconditional, help: ArgumentHelp("Accuracy (CEP68 radius, metres) of every fix that has none: for a feed without an accuracy column.",
                                                        valueName: "METRES"), transform: decimalOption)
    var accuracyM: Double?

    func validate() throws {
        if let a = accuracyM, !(a.isFinite && a >= 0) { throw ValidationError("--accuracy-m must be a finite number of metres >= 0, got \(a)") }
        if let columns { do { _ = try FixFeed(columns: columns) } catch let e as InputError { throw ValidationError("\(e)") } }
    }

    /// The feed these options describe; `time` adds the time reading (judge).
    func feed(time: TimeUnitOption? = nil, catalog: Connection? = nil) throws -> FixFeed {
        var feed = try columns.map { try FixFeed(columns: $0) } ?? .standard
        feed.defaultAccuracy = accuracyM
        if let time { try time.apply(to: &feed, catalog: catalog) }
        return feed
    }
}

extension FixFeed.TimeUnit: ExpressibleByArgument {}

/// `--time-unit s|ms`, and the catalog's zone for times without an offset.
struct TimeUnitOption: ParsableArguments {
    @Option(help: "Unit of times written as numbers: s (Unix seconds) or ms (epoch milliseconds, as pandas' to_json and JavaScript write them); never guessed from the digits. Default: s.")
    var timeUnit: FixFeed.TimeUnit = .seconds

    /// Sets the unit, and the zone a time without an offset is read in
    /// (`Settings.localZone`: the catalog's default_timezone once set to a
    /// zone other than UTC; without one such times are refused).
    func apply(to feed: inout FixFeed, catalog: Connection?) throws {
        feed.timeUnit = timeUnit
        feed.localZone = try catalog.flatMap { try Settings($0).localZone() }
    }
}
