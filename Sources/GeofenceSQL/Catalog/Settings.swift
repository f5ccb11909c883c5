import GeofenceCore

/// Database-wide settings in gf_settings, validated on write.
public struct Settings {
    let db: Connection
    public init(_ db: Connection) { self.db = db }

    /// The settings a user may set, with what each means.
    public static let known: [(key: String, help: String)] = [
        ("default_timezone", "IANA time zone for conditions and areas without their own (default UTC)"),
        ("default_confidence", "CEP confidence p in [0, 1) for areas without their own; 0 = plain containment"),
    ]

    public func all() throws -> [(String, String?)] {
        try db.query("SELECT key, value FROM gf_settings ORDER BY key").map { ($0[0].string ?? "", $0[1].string) }
    }

    public func get(_ key: String) throws -> String? {
        try db.scalar("SELECT value FROM gf_settings WHERE key = ?", [.text(key)]).string
    }

    public func set(_ key: String, _ value: String) throws {
        switch key {
        case "default_timezone":
            guard TimeZoneNames.isKnown(value) else { throw InputError("unknown time zone '\(value)'", field: key) }
        case "default_confidence":
            guard let p = Double(value), p >= 0, p < 1 else { throw InputError("must be a number in [0, 1), got '\(value)'", field: key) }
        default:
            throw InputError("unknown setting; settable keys: \(Self.known.map(\.key).joined(separator: ", "))", field: key)
        }
        try setUnchecked(key, value)
    }

    func setUnchecked(_ key: String, _ value: String?) throws {
        try db.query("INSERT INTO gf_settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     [.text(key), value.sqlValue])
    }

    public var defaultConfidence: Double { (try? get("default_confidence")).flatMap { $0.flatMap(Double.init) } ?? 0 }
}
