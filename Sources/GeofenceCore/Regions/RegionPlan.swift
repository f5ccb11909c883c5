/// The regions a phone should watch so that a server-side engine sees every
/// entry and exit: the N nearest areas as circles the OS can monitor, plus a
/// "re-sync" circle around the phone that it leaves before it can reach any
/// area outside those N (then it asks for a new plan).
///
/// Choices (docs/sql.md, "Device regions"; docs/behaviour.md §8): every area region reports entry and
/// exit (the server judges rules and dwell itself; the OS only wakes the app);
/// a region's radius is the area's smallest enclosing circle plus the margin,
/// at least `minRadiusM` (the OSes miss smaller ones) and at most `maxRadiusM`
/// (iOS refuses larger ones; a capped region is flagged, it no longer covers
/// its area); the re-sync radius is 1 m short of the (N+1)-th nearest area, or
/// the power-saving wake-up radius if that is smaller, or `maxRadiusM` when
/// the catalog has no further area.
public struct RegionPlan: Sendable {
    public struct Candidate: Sendable {
        public var areaId: String
        /// Metres from the position to the area, 0 inside.
        public var distanceM: Double
        public var shape: Shape
        public var validUntil: Timestamp?
        public init(areaId: String, distanceM: Double, shape: Shape, validUntil: Timestamp?) {
            self.areaId = areaId; self.distanceM = distanceM; self.shape = shape; self.validUntil = validUntil
        }
    }

    public struct Region: Equatable, Sendable {
        public var identifier: String
        public var center: LonLat
        public var radiusM: Double
        /// Metres from the position to the area (0 inside); nil for the re-sync region.
        public var distanceM: Double?
        /// The radius hit `maxRadiusM`: the circle no longer holds the whole area.
        public var capped: Bool
        /// Milliseconds until the area's valid_until, from the plan's time; nil = never.
        public var expiresInMs: Int64?
    }

    public struct Options: Sendable {
        public var marginM = 0.0
        public var minRadiusM = 100.0
        public var maxRadiusM = 100_000.0
        /// Power saving's wake-up radius for the device's speed, if any.
        public var wakeRadiusM: Double?
        public var resyncIdentifier = "gf-resync"
        public init() {}
    }

    public var position: LonLat
    public var regions: [Region]
    public var resync: Region

    /// `nearest` holds the N nearest areas in order; `next` the distance of the
    /// (N+1)-th, nil if the catalog has no more.
    public init(position: LonLat, nearest: [Candidate], nextDistanceM next: Double?, at time: Timestamp?, options o: Options) {
        self.position = position
        regions = nearest.map { c in
            let circle = EnclosingCircle.of(c.shape)
            let wanted = max(o.minRadiusM, circle.radiusM + o.marginM)
            var expires: Int64?
            if let until = c.validUntil, let now = time { expires = max(0, (until.microseconds - now.microseconds) / 1000) }
            return Region(identifier: c.areaId, center: circle.center, radiusM: min(wanted, o.maxRadiusM), distanceM: c.distanceM,
                          capped: wanted > o.maxRadiusM, expiresInMs: expires)
        }
        var r = next.map { max(0, $0 - 1) } ?? o.maxRadiusM
        if let wake = o.wakeRadiusM { r = min(r, wake) }
        resync = Region(identifier: o.resyncIdentifier, center: position, radiusM: min(r, o.maxRadiusM), distanceM: nil,
                        capped: r > o.maxRadiusM, expiresInMs: nil)
    }

    /// `CLCircularRegion(center:radius:identifier:)` with notifyOnEntry/Exit; the
    /// re-sync region notifies on exit only.
    public var iosJSON: JSONValue {
        func region(_ r: Region, entry: Bool) -> JSONValue {
            var m: [(String, JSONValue)] = [
                ("identifier", .string(r.identifier)),
                ("center", .object([("latitude", .number(r.center.lat)), ("longitude", .number(r.center.lon))])),
                ("radius", .number(Self.rounded(r.radiusM))),
                ("notifyOnEntry", .bool(entry)), ("notifyOnExit", .bool(true)),
            ]
            if r.capped { m.append(("capped", .bool(true))) }
            return .object(m)
        }
        return .object([("regions", .array(regions.map { region($0, entry: true) })), ("resync", region(resync, entry: false))])
    }

    /// `Geofence.Builder` fields: setRequestId, setCircularRegion,
    /// setExpirationDuration (-1 = NEVER_EXPIRE), setTransitionTypes
    /// (1 ENTER | 2 EXIT), setNotificationResponsiveness (0).
    public var androidJSON: JSONValue {
        func geofence(_ r: Region, transitions: Int) -> JSONValue {
            var m: [(String, JSONValue)] = [
                ("requestId", .string(r.identifier)),
                ("latitude", .number(r.center.lat)), ("longitude", .number(r.center.lon)),
                ("radius", .number(Self.rounded(r.radiusM))),
                ("expirationDuration", .number(String(r.expiresInMs ?? -1))),
                ("transitionTypes", .number(String(transitions))),
                ("notificationResponsiveness", .number("0")),
            ]
            if r.capped { m.append(("capped", .bool(true))) }
            return .object(m)
        }
        return .object([("geofences", .array(regions.map { geofence($0, transitions: 3) })), ("resync", geofence(resync, transitions: 2))])
    }

    /// Both platforms' payloads and the distances behind them.
    public var json: JSONValue {
        .object([
            ("position", .object([("latitude", .number(position.lat)), ("longitude", .number(position.lon))])),
            ("areas", .array(regions.map { .object([("area_id", .string($0.identifier)), ("distance_m", .number(Self.rounded($0.distanceM ?? 0)))]) })),
            ("ios", iosJSON), ("android", androidJSON),
        ])
    }

    /// Centimetres are plenty for a region radius and keep payloads short; rounded up so the circle still holds.
    static func rounded(_ m: Double) -> Double { (m * 100).rounded(.up) / 100 }
}
