/// One location fix (behaviour §2).
public struct Fix: Equatable, Sendable {
    public var subjectId: String
    public var ts: Timestamp
    public var position: LonLat
    /// Horizontal accuracy, a CEP68 radius in metres.
    public var accuracy: Double

    public init(subjectId: String, ts: Timestamp, lat: Double, lon: Double, accuracy: Double) {
        self.subjectId = subjectId; self.ts = ts; self.position = LonLat(lon: lon, lat: lat); self.accuracy = accuracy
    }

    /// Builds a fix from raw fields, or says why it is invalid (behaviour §2): it
    /// then changes no state, and batch work counts it.
    public static func validated(subjectId: String?, time: String?, lat: Double?, lon: Double?, accuracy: Double?) -> Result<Fix, InvalidFix> {
        guard let subjectId, !subjectId.isEmpty else { return .failure(InvalidFix("missing subject_id", field: .subject)) }
        guard let time, !time.isEmpty else { return .failure(InvalidFix("missing time", field: .ts)) }
        let ts: Timestamp
        do { ts = try Timestamp.parse(time) } catch { return .failure(InvalidFix("\(error)", field: .ts)) }
        return validated(subjectId: subjectId, ts: ts, lat: lat, lon: lon, accuracy: accuracy)
    }

    /// Whether `validated` would accept these fields: the same rules as one
    /// test, for a batch that needs the reason only of the rare invalid fix.
    @inlinable
    public static func isValid(subjectId: String, lat: Double, lon: Double, accuracy: Double) -> Bool {
        !subjectId.isEmpty && !subjectId.utf8.contains(0) && (-90...90).contains(lat) && (-180...180).contains(lon) && accuracy.isFinite && accuracy >= 0
    }

    /// The same, for a reader that has already parsed the time.
    public static func validated(subjectId: String?, ts: Timestamp, lat: Double?, lon: Double?, accuracy: Double?) -> Result<Fix, InvalidFix> {
        guard let subjectId, !subjectId.isEmpty else { return .failure(InvalidFix("missing subject_id", field: .subject)) }
        // Kept whole in the database, but shown and compared up to the NUL by C callers.
        guard !subjectId.utf8.contains(0) else { return .failure(InvalidFix("subject_id \(Echo.quoted(subjectId)) holds a NUL character (U+0000)", field: .subject)) }
        return position(lat: lat, lon: lon, accuracy: accuracy, ifMissing: nil).map { p, accuracy in
            Fix(subjectId: subjectId, ts: ts, lat: p.lat, lon: p.lon, accuracy: accuracy)
        }
    }

    /// A position to locate (`geofence locate --fixes`): a fix's rules for
    /// latitude, longitude and accuracy, with no subject or time needed, and
    /// a missing accuracy read as 0 (the containment of an exact position).
    public static func validatedPosition(lat: Double?, lon: Double?, accuracy: Double?) -> Result<(LonLat, Double), InvalidFix> {
        position(lat: lat, lon: lon, accuracy: accuracy, ifMissing: 0)
    }

    /// The position rules, in the order their reasons are given; a missing
    /// accuracy is `ifMissing`, or invalid when that is nil.
    private static func position(lat: Double?, lon: Double?, accuracy: Double?, ifMissing: Double?) -> Result<(LonLat, Double), InvalidFix> {
        guard let lat, !lat.isNaN else { return .failure(InvalidFix("missing or NaN latitude", field: .lat)) }
        guard let lon, !lon.isNaN else { return .failure(InvalidFix("missing or NaN longitude", field: .lon)) }
        guard (-90...90).contains(lat) else { return .failure(InvalidFix("latitude \(lat) outside [-90, 90]", field: .lat)) }
        guard (-180...180).contains(lon) else { return .failure(InvalidFix("longitude \(lon) outside [-180, 180]", field: .lon)) }
        guard let accuracy = accuracy ?? ifMissing else { return .failure(InvalidFix("missing accuracy", field: .accuracy)) }
        guard !accuracy.isNaN, accuracy.isFinite else { return .failure(InvalidFix("accuracy is not a finite number", field: .accuracy)) }
        guard accuracy >= 0 else { return .failure(InvalidFix("negative accuracy \(accuracy)", field: .accuracy, note: "the fix is marked invalid")) }
        return .success((LonLat(lon: lon, lat: lat), accuracy))
    }
}

public struct InvalidFix: Error, Equatable, CustomStringConvertible {
    /// What is wrong with the value, alone: what a refusal naming the field says after "makes the fix invalid".
    public var detail: String
    /// The field at fault, when one is: a feed names it by the user's column (`FixFeed.describe`).
    public var field: FixField?
    /// Why such a value means an invalid fix, where the value alone does not
    /// say it (a phone marks a fix without a position by a negative accuracy).
    public var note: String?
    public init(_ detail: String, field: FixField? = nil, note: String? = nil) { self.detail = detail; self.field = field; self.note = note }
    /// The reason a batch reports and gf_explain stores: the detail and its note (the stored text since schema version 6).
    public var reason: String { note.map { "\(detail) (\($0))" } ?? detail }
    public var description: String { reason }
}
