import GeofenceCore

/// The containment SQL functions (behaviour §3). `area` is a SpatiaLite geometry
/// BLOB (Polygon or MultiPolygon, SRID 4326 or 0) or a gf_circle() value.
/// Any NULL argument gives NULL. Contracts are in docs/sql.md.
///
/// The fix is `lat, lon` (numbers) or one point geometry in PostGIS and
/// SpatiaLite's lon-first order, as GIS users write it:
///
///     SELECT gf_contains(geom, 35.715, 139.773, 20);                          -- lat, lon, accuracy
///     SELECT gf_contains(geom, MakePoint(139.773, 35.715, 4326), 20, 0.9);    -- point, accuracy, p
///     SELECT gf_contains(geom, MakePoint(139.773, 35.715, 4326));             -- GEOS-style, accuracy 0
enum GeometryFunctions {
    static func register(_ db: Connection) throws {
        let cache = ShapeCache()
        let frames = FrameCache()
        let shapeNames = ["area", "lat", "lon", "accuracy_m", "p"]

        try db.createFunction("gf_cep_factor", arities: [1], argumentNames: ["p"], flags: FunctionFlags.pure) { a in
            if a.isNull(0) { return .null }
            return .real(CEP.factor(try confidence(a, 0)))
        }

        try db.createFunction("gf_circle", arities: [3], argumentNames: ["lat", "lon", "radius_m"], flags: FunctionFlags.pure) { a in
            if (0..<3).contains(where: a.isNull) { return .null }
            let p = try position(a, lat: 0, lon: 1)
            let r = try a.double(2)
            guard r > 0, r <= 10_000_000 else { throw a.fail(2, "must be > 0 and at most 10,000 km, got \(r)") }
            return .blob(CircleBlob.encode(Circle(center: p, radiusM: r)))
        }

        try db.createFunction("gf_distance_m", arities: [2, 3], argumentNames: shapeNames, flags: FunctionFlags.pure) { a in
            if (0..<a.count).contains(where: a.isNull) { return .null }
            let fix = frames.frame(try fixArguments(a, optional: 0).position)
            // Not through `geometry`: straight from the BLOB, the vertex check
            // rides on the edge walk (UnpreparedPolygons.signedDistance(blob:)).
            return .real(try a.withBlob(0) { bytes in
                if mayBeInPlace(bytes), let d = UnpreparedPolygons.signedDistance(blob: bytes, maxVertices: inPlaceMaxVertices, from: fix) {
                    return d
                }
                return try cached(bytes, a, 0, cache).signedDistance(from: fix)
            })
        }

        try db.createFunction("gf_contains", arities: [2, 3, 4, 5], argumentNames: shapeNames, flags: FunctionFlags.pure) { a in
            if (0..<a.count).contains(where: a.isNull) { return .null }
            let f = try fixArguments(a, optional: 2)
            let p = f.position
            let rule = VerdictRule(confidence: f.confidence ?? 0)
            let acc = f.accuracy ?? 0
            let v = try geometry(a, 0, cache) { rule.verdict($0, at: p, accuracy: acc) { frames.frame(p) } }
            // An area with no interior holds no point: outside, not undecided near its boundary.
            if v == .undecided, try !a.withBlob(0, { try shape(from: $0, a, 0) }).hasInterior { return .integer(0) }
            return verdictValue(v)
        }

        try db.createFunction("gf_inside_probability", arities: [3, 4], argumentNames: shapeNames, flags: FunctionFlags.pure) { a in
            if (0..<a.count).contains(where: a.isNull) { return .null }
            let f = try fixArguments(a, optional: 1, required: 1)
            let shape = try prepared(a, 0, cache)
            // +180 asked as -180: the same meridian, the same answer to the last bit.
            return .real(InsideProbability.of(shape, at: f.position.canonical, accuracy: f.accuracy ?? 0))
        }
    }

    /// The fix of a call, from argument 2 on: `lat, lon` or a point geometry,
    /// then up to `optional` of (accuracy_m, p), the first `required` of them
    /// needed. With `lat, lon` the accuracy is required where the function
    /// takes one (as it always was); the point form follows GEOS, where a
    /// point alone is a point (accuracy 0).
    static func fixArguments(_ a: Arguments, optional: Int, required: Int = 0)
        throws -> (position: LonLat, accuracy: Double?, confidence: Double?) {
        let pointForm = a.isBlob(1)
        let names = pointForm ? ["area", "point", "accuracy_m", "p"] : ["area", "lat", "lon", "accuracy_m", "p"]
        let first = pointForm ? 2 : 3
        let given = a.count - first
        let needed = pointForm ? required : (optional > 0 ? max(required, 1) : 0)
        guard given >= needed, given <= optional else {
            let forms = pointForm ? "(area, point\(optional > 0 ? ", accuracy_m" : "")\(optional > 1 ? " [, p]" : ""))"
                                  : "(area, lat, lon\(optional > 0 ? ", accuracy_m" : "")\(optional > 1 ? " [, p]" : ""))"
            throw FunctionError("\(a.function): \(a.count) arguments, but with a \(pointForm ? "point geometry" : "latitude and longitude") it takes \(forms)")
        }
        func fail(_ i: Int, _ message: String) -> FunctionError {
            FunctionError("\(a.function): argument \(i + 1) (\(names[i])) \(message)")
        }
        let p: LonLat
        if pointForm {
            p = try a.withBlob(1) { bytes in
                do {
                    let (srid, point) = try SpatiaLiteBlob.decodePoint(bytes)
                    guard srid == 4326 || srid == 0 else { throw fail(1, "has SRID \(srid); only 4326 (WGS 84 lon/lat), or 0 taken as lon/lat, is supported") }
                    return point
                } catch let e as SpatiaLiteBlob.DecodeError {
                    throw fail(1, "is not a usable point geometry: \(e)")
                }
            }
        } else {
            p = try position(a, lat: 1, lon: 2)
        }
        // The signature's names are the lat/lon form's: say the point form's own.
        func number(_ i: Int) throws -> Double {
            do { return try a.double(i) } catch { throw pointForm ? fail(i, "must be a finite number") : error }
        }
        var acc: Double?, conf: Double?
        if given >= 1 {
            let v = try number(first)
            guard v >= 0 else { throw fail(first, "must be >= 0 metres, got \(v)") }
            acc = v
        }
        if given >= 2 {
            let v = try number(first + 1)
            guard v >= 0, v < 1 else { throw fail(first + 1, "must be a confidence in [0, 1), got \(v)") }
            conf = v
        }
        return (p, acc, conf)
    }

    static func verdictValue(_ v: Verdict) -> SQLiteValue { v.sqlValue.map { .integer(Int64($0)) } ?? .null }

    /// Polygons with at most this many vertices are answered from the BLOB in
    /// place (`UnpreparedPolygons`): in a join the BLOB has just been read and
    /// is in the CPU cache, while a prepared copy would be found by hashing and
    /// comparing bytes and then read cold. Larger ones, circles and anything
    /// unusual go through the cache of prepared shapes. Same answers either way.
    static let inPlaceMaxVertices = 64

    /// Whether a BLOB is short enough to hold at most `inPlaceMaxVertices`:
    /// longer ones skip the in-place reader's checks altogether.
    @inline(__always)
    static func mayBeInPlace(_ bytes: UnsafeRawBufferPointer) -> Bool { bytes.count <= 80 + 16 * inPlaceMaxVertices }

    static func geometry<R>(_ a: Arguments, _ i: Int, _ cache: ShapeCache, _ body: (any AreaGeometry) -> R) throws -> R {
        try a.withBlob(i) { bytes in
            if mayBeInPlace(bytes), let view = SpatiaLiteBlob.FlatView(bytes, maxVertices: inPlaceMaxVertices) {
                return body(UnpreparedPolygons(view))
            }
            return body(try cached(bytes, a, i, cache))
        }
    }

    static func prepared(_ a: Arguments, _ i: Int, _ cache: ShapeCache) throws -> PreparedShape {
        try a.withBlob(i) { try cached($0, a, i, cache) }
    }

    /// The prepared shape of argument `i`'s BLOB, from the cache or decoded now.
    static func cached(_ bytes: UnsafeRawBufferPointer, _ a: Arguments, _ i: Int, _ cache: ShapeCache) throws -> PreparedShape {
        try cache.shape(for: bytes) { try shape(from: bytes, a, i) }
    }

    static func shape(from bytes: UnsafeRawBufferPointer, _ a: Arguments, _ i: Int) throws -> Shape {
        if let c = CircleBlob.decode(bytes) { return .circle(c) }
        do {
            let areal = try SpatiaLiteBlob.decodeAreal(bytes)
            guard areal.srid == 4326 || areal.srid == 0 else {
                throw a.fail(i, "has SRID \(areal.srid); only 4326 (WGS 84 lon/lat), or 0 taken as lon/lat, is supported")
            }
            return .polygons(areal.polygons)
        } catch let e as SpatiaLiteBlob.DecodeError {
            throw a.fail(i, "is not a usable area geometry: \(e)")
        }
    }

    static func position(_ a: Arguments, lat: Int, lon: Int) throws -> LonLat {
        let la = try a.double(lat), lo = try a.double(lon)
        guard (-90...90).contains(la) else { throw a.fail(lat, "must be a latitude in [-90, 90], got \(la)") }
        guard (-180...180).contains(lo) else { throw a.fail(lon, "must be a longitude in [-180, 180], got \(lo)") }
        return LonLat(lon: lo, lat: la)
    }

    static func accuracy(_ a: Arguments, _ i: Int) throws -> Double {
        let v = try a.double(i)
        guard v >= 0 else { throw a.fail(i, "must be >= 0 metres, got \(v)") }
        return v
    }

    static func confidence(_ a: Arguments, _ i: Int) throws -> Double {
        let p = try a.double(i)
        guard p >= 0, p < 1 else { throw a.fail(i, "must be a confidence in [0, 1), got \(p)") }
        return p
    }
}

/// The last fix's frame: a join asks one fix against each of its candidate
/// areas on consecutive rows, and the frame's trigonometry need not be redone.
/// Keyed by the exact coordinates, so it can never answer for another point.
final class FrameCache {
    private var last: FixFrame?

    func frame(_ p: LonLat) -> FixFrame {
        if let f = last, f.p == p { return f }
        let f = FixFrame(p)
        last = f
        return f
    }
}
