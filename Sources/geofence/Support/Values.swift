import GeofenceCore
import GeofenceSQL

// Option values every command checks the same way, errors naming the option.

func checkedPosition(lat: Double, lon: Double) throws -> LonLat {
    guard (-90...90).contains(lat) else { throw InputError("must be a latitude in [-90, 90], got \(lat)", field: "--lat") }
    guard (-180...180).contains(lon) else { throw InputError("must be a longitude in [-180, 180], got \(lon)", field: "--lon") }
    return LonLat(lon: lon, lat: lat)
}

func checkedAccuracy(_ accuracy: Double) throws -> Double {
    guard accuracy.isFinite, accuracy >= 0 else { throw InputError("must be a finite number of metres >= 0, got \(accuracy)", field: "--accuracy") }
    return accuracy
}

func parseTime(_ text: String, field: String) throws -> Timestamp {
    do { return try Timestamp.parse(text) } catch { throw InputError("\(error)", field: field) }
}

/// A time option that also takes a date (`--since 2026-11-20`): the date is
/// that day's start in the catalog's default_timezone (UTC unless set), the
/// first instant the day's clocks show (the end of a gap, in a zone whose
/// clocks skip midnight); anything else is read as `parseTime` reads it.
///
/// A time without an offset is read as the catalog's feeds read one (local
/// time in its default_timezone once that is set to a zone: `FixFeed`), and
/// eight digits alone are refused: `20261120` would otherwise be Unix
/// seconds in August 1970, where its writer meant a day.
func parseTimeOrDate(_ text: String, field: String, catalog: Connection) throws -> Timestamp {
    let trimmed = text.trimmingSpaces
    if trimmed.utf8.count == 8, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
        throw InputError("\(Echo.quoted(text)) reads as Unix seconds in 1970; a day is written with dashes (2026-11-20), "
                         + "a time as ISO 8601 with its offset", field: field)
    }
    guard let day = CivilDate.parse(trimmed) else {
        var feed = FixFeed.standard
        feed.localZone = try Settings(catalog).localZone()
        do { return try feed.time(text) } catch { throw InputError("\(error)", field: field) }
    }
    let name = try Settings(catalog).get("default_timezone") ?? "UTC"
    let zone: TimeZone
    do { zone = try TimeZone.load(name) } catch let e as TimeZone.LoadError { throw InputError(e.description, field: "default_timezone") }
    let midnight = Int64(day) * 86_400
    let start = zone.instants(localSeconds: midnight).first ?? midnight - Int64(zone.offset(at: Timestamp(microseconds: (midnight - 54_000) * 1_000_000)))
    let t = Timestamp(microseconds: start * 1_000_000)
    guard t.isStorable else { throw InputError("the day \(text) in \(name) begins outside the years 0000 to 9999", field: field) }
    return t
}
