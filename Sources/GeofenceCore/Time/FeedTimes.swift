/// The two time forms a feed may use beside the stored ones (behaviour §6,
/// docs/inputs.md): epoch milliseconds, read only when the feed says so
/// (`FixFeed.timeUnit`), and local time without an offset, read only in a
/// zone the catalog names (`FixFeed.localZone`).
extension Timestamp {
    /// Epoch milliseconds written as a decimal (`1700000000123`,
    /// `1700000000123.5`), exact to the microsecond, cut towards the earlier
    /// time as Unix seconds are; nil when `text` is no number (an ISO 8601
    /// time, read as usual). Out of the storable years: `outOfRange`.
    public static func parseMilliseconds(_ text: String) throws -> Timestamp? {
        var s = text.trimmingSpaces
        guard var d = s.withUTF8({ DecimalDigits.scan($0) }) else { return nil }
        d.exponent -= 3
        guard let us = d.millionths, Timestamp(microseconds: us).isStorable else {
            throw ParseError.outOfRange(s + " ms")
        }
        return Timestamp(microseconds: us)
    }

    /// Whether `text` reads as Unix seconds out of range but as epoch
    /// milliseconds of the storable years' recent part (13 digits before any
    /// point: 2001 to 2286), as pandas' `to_json` and JavaScript's
    /// `Date.now()` write times. For a hint only, never to read the time.
    public static func looksLikeEpochMilliseconds(_ text: String) -> Bool {
        let s = text.trimmingSpaces
        let whole = s.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return whole.count == 13 && whole.allSatisfy(\.isASCIIDigit) && (try? parse(s)) == nil
    }

    /// Whether `text` is refused only for having no UTC offset (for a hint).
    public static func lacksOnlyOffset(_ text: String) -> Bool {
        do { _ = try parse(text); return false } catch ParseError.noOffset { return true } catch { return false }
    }

    /// ISO 8601 without an offset (`2026-11-20T08:00:00`, `2026-11-20 08:00`)
    /// as local time in `zone`. A local time the clocks skipped (the hour a
    /// daylight-saving change leaves out) is refused: no instant had it. One
    /// they repeated (the hour after it ends) is the earlier of its two
    /// instants, the first time the clock showed it.
    public static func parseLocal(_ text: String, in zone: TimeZone) throws -> Timestamp {
        // Read as if it were UTC: the local calendar fields as one count of seconds.
        let fields: Timestamp
        do { fields = try parse(text + "Z") } catch { throw ParseError.malformed(text) }
        let (local, micros) = fields.microseconds.floorDivided(by: 1_000_000)
        guard let utc = zone.instants(localSeconds: local).first else { throw ParseError.skippedLocal(text, zone: zone.name) }
        let t = Timestamp(microseconds: utc * 1_000_000 + micros)
        guard t.isStorable else { throw ParseError.outOfRange(text) }
        return t
    }
}

extension TimeZone {
    /// The UTC instants (seconds) whose local time in this zone is `local`
    /// seconds since 1970-01-01 local, earliest first: one, none in a gap
    /// the clocks skipped, two in an hour they repeated. The offsets in force
    /// 15 hours either side bound every candidate (no offset exceeds 14
    /// hours), so a change between them is found.
    public func instants(localSeconds local: Int64) -> [Int64] {
        var offsets: [Int] = []
        for probe in [local - 54_000, local, local + 54_000] {
            let o = offset(at: Timestamp(microseconds: probe * 1_000_000))
            if !offsets.contains(o) { offsets.append(o) }
        }
        let candidates = offsets.map { local - Int64($0) }
        return candidates.filter { offset(at: Timestamp(microseconds: $0 * 1_000_000)) == Int(local - $0) }.sorted()
    }
}
