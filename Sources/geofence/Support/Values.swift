import GeofenceCore

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
