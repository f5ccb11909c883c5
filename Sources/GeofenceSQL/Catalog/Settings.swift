import GeofenceCore

/// Database-wide settings in gf_settings, validated on write.
public struct Settings {
    let db: Connection
    /// Where the reads find gf_settings (`CatalogTables`).
    let tables: CatalogTables
    public init(_ db: Connection) { self.init(db, tables: .unqualified) }
    init(_ db: Connection, tables: CatalogTables) { self.db = db; self.tables = tables }

    /// The settings a user may set, with what each means.
    public static let known: [(key: String, help: String)] = [
        ("default_timezone", "IANA time zone for conditions and areas without their own (default UTC)"),
        ("default_confidence", "CEP confidence p in [0, 1) for areas without their own; 0 = plain containment"),
    ] + PositioningSettings.keys + regionKeys + Retention.keys

    /// Device region planning (`geofence regions`, gf_regions).
    public static let regionKeys: [(key: String, help: String)] = [
        ("region_margin_m", "metres added to every area's enclosing circle, >= 0 (default 0)"),
        ("region_min_radius_m", "smallest region radius handed to a phone, >= 1 (default 100: the OSes miss smaller ones)"),
        ("region_max_radius_m", "largest region radius, >= 1 (default 100000; set it to the device's maximumRegionMonitoringDistance)"),
    ]

    /// Keys a user may remove, returning to the default.
    static var unsettable: Set<String> { Set(PositioningSettings.keys.map(\.key) + regionKeys.map(\.key) + Retention.keys.map(\.key)) }

    public func all() throws -> [(String, String?)] {
        try db.query("SELECT key, value FROM \(tables.settings) ORDER BY key").map { ($0[0].string ?? "", $0[1].string) }
    }

    public func get(_ key: String) throws -> String? {
        do { return try db.scalar("SELECT value FROM \(tables.settings) WHERE key = ?", [.text(key)]).text(field: key) } catch let e as InputError {
            throw InputError("\(e.message) in gf_settings (set it with `geofence settings DB \(key) VALUE`)", field: key)
        }
    }

    public func set(_ key: String, _ value: String) throws {
        switch key {
        case "default_timezone":
            guard TimeZoneNames.isKnown(value) else { throw InputError(TimeZoneNames.unknown(value), field: key) }
        case "default_confidence":
            // A number as text loses the spaces at its ends, as everywhere; it is stored without them.
            let number = value.trimmingEdgeSpaces()
            guard let p = NumberText.double(number), p >= 0, p < 1 else { throw InputError("must be a number in [0, 1), got \(Echo.quoted(value))", field: key) }
            return try setUnchecked(key, number)
        case _ where Retention.keys.contains(where: { $0.key == key }):
            guard Retention.days(value) != nil else { throw InputError("must be \(Retention.ageForm), got \(Echo.quoted(value))", field: key) }
        case _ where Self.unsettable.contains(key):
            // These rules tie keys together (speed thresholds must rise), so check the whole set as it would be.
            var stored = try storedValues()
            stored[key] = value
            _ = try PositioningSettings.from(stored)
            _ = try RegionPlan.Options.from(stored)
        default:
            throw InputError("unknown setting; settable keys: \(Self.known.map(\.key).joined(separator: ", "))", field: key)
        }
        try setUnchecked(key, value)
    }

    /// Removes a positioning or region setting, so its default applies again.
    public func unset(_ key: String) throws {
        guard Self.unsettable.contains(key) else { throw InputError("cannot be unset; only positioning, region and retention settings can", field: key) }
        var stored = try storedValues()
        stored[key] = nil
        _ = try PositioningSettings.from(stored)
        _ = try RegionPlan.Options.from(stored)
        try db.query("DELETE FROM gf_settings WHERE key = ?", [.text(key)])
    }

    func storedValues() throws -> [String: String] {
        var out: [String: String] = [:]
        for (k, v) in try all() { if let v { out[k] = v } }
        return out
    }

    /// The positioning settings, checked (a database edited by hand can break the rules).
    public func positioning() throws -> PositioningSettings { try PositioningSettings.from(try storedValues()) }

    public func regionOptions() throws -> RegionPlan.Options { try RegionPlan.Options.from(try storedValues()) }

    func setUnchecked(_ key: String, _ value: String?) throws {
        try db.query("INSERT INTO gf_settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     [.text(key), value.sqlValue])
    }

    /// The zone a time written without a UTC offset is read in
    /// (`FixFeed.localZone`): the catalog's default_timezone once it has been
    /// set to a zone other than UTC, a new catalog's value (behaviour §6:
    /// `Etc/UTC` reads such times as UTC); nil: such times are refused, as
    /// they always were. Every door that judges fixes of this catalog (`geofence
    /// judge`, `check`, a task over Arrow) asks this one rule, so a time means
    /// the same instant through each. A zone this machine cannot load is an
    /// input error of default_timezone.
    public func localZone() throws -> TimeZone? {
        guard let name = try get("default_timezone"), name != "UTC" else { return nil }
        do { return try TimeZone.load(name) } catch let e as TimeZone.LoadError {
            throw InputError(e.description, field: "default_timezone")
        }
    }

    /// The confidence of an area without its own (0 when unset). A stored
    /// value that is no number in [0, 1) (written past `settings set`) is an
    /// input error of default_confidence: judging computes with it, and
    /// would trap on it.
    public func defaultConfidence() throws -> Double {
        guard let text = try get("default_confidence") else { return 0 }
        guard let p = Double(text), p >= 0, p < 1 else {
            throw InputError("default_confidence in gf_settings must be a number in [0, 1), got \(Echo.quoted(text)) (set it with `geofence settings DB default_confidence VALUE`)")
        }
        return p
    }
}
