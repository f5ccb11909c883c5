import GeofenceCore

extension BatchLocate {
    /// What a batch keeps of a fix: its position, or why it is invalid, or
    /// the error that stops the batch (the file could not be read on). Made
    /// from a row on the thread that reads the rows (`FixSources.file(each:)`),
    /// so the batch's own thread neither copies nor frees whole rows.
    public enum Input {
        /// A valid fix; `accuracyGiven` false: the row had no accuracy, and is located as an exact position.
        case position(LonLat, accuracy: Double, accuracyGiven: Bool)
        case invalid(InvalidFix)
        case unreadable(Error)

        /// The fix's own rules for its position and accuracy (one rule, in the core), no subject or time needed.
        public init(_ row: Judgement.Row) {
            if let e = row.readError {
                self = .unreadable(e)
            } else if let problem = row.problem {
                self = .invalid(InvalidFix(problem, field: row.problemField))
            } else {
                switch Fix.validatedPosition(lat: row.lat, lon: row.lon, accuracy: row.accuracy) {
                case .success(let (p, accuracy)): self = .position(p, accuracy: accuracy, accuracyGiven: row.accuracy != nil)
                case .failure(let why): self = .invalid(why)
                }
            }
        }
    }
}
