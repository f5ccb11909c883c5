/// The three-valued verdict of one fix against one area (behaviour §3).
public enum Verdict: Equatable, Sendable {
    case inside      // counts towards entering
    case outside     // counts towards exiting
    case undecided   // the error circle straddles the boundary, or the fix is too inaccurate

    /// The SQL encoding: 1, 0, NULL.
    public var sqlValue: Int? {
        switch self { case .inside: 1; case .outside: 0; case .undecided: nil }
    }
}

/// What a verdict needs besides the geometry: the area's accuracy limits and the confidence.
public struct VerdictRule: Equatable, Sendable {
    /// A fix whose accuracy is larger than this cannot count towards entering; nil = no limit.
    public var inAccuracyMax: Double?
    public var outAccuracyMax: Double?
    /// CEP confidence p in [0, 1); 0 = plain containment.
    public var confidence: Double

    public init(inAccuracyMax: Double? = nil, outAccuracyMax: Double? = nil, confidence: Double = 0) {
        self.inAccuracyMax = inAccuracyMax; self.outAccuracyMax = outAccuracyMax; self.confidence = confidence
    }

    /// inside-candidate: d ≥ k·accuracy and accuracy ≤ in limit; outside-candidate:
    /// d ≤ -k·accuracy and accuracy ≤ out limit. With k·accuracy = 0 the boundary
    /// itself counts as outside, as GEOS containment does, so every fix is one or the other.
    /// `knownInside`: the caller already knows that the shape contains `p` (an
    /// index that classified the space around it), so no containment test;
    /// `knownOutside`: that it does not (`p` is outside its index box).
    public func verdict(_ shape: some AreaGeometry, at p: LonLat, accuracy: Double, knownInside: Bool = false,
                        knownOutside: Bool = false) -> Verdict {
        verdict(shape, at: p, accuracy: accuracy, knownInside: knownInside, knownOutside: knownOutside) { FixFrame(p) }
    }

    /// The same, with the fix's frame from the caller (built only if a
    /// distance is needed: a caller asking one fix against many areas keeps it).
    public func verdict(_ shape: some AreaGeometry, at p: LonLat, accuracy: Double, knownInside: Bool = false, knownOutside: Bool = false,
                        frame: () -> FixFrame) -> Verdict {
        let margin = CEP.factor(confidence) * accuracy
        let location: PointLocation = knownInside ? .inside : (knownOutside ? .outside : shape.location(of: p))
        if location == .inside {
            guard inAccuracyMax.map({ accuracy <= $0 }) ?? true else { return .undecided }
            return margin <= 0 || shape.isAtLeast(margin, from: frame()) ? .inside : .undecided
        } else {
            guard outAccuracyMax.map({ accuracy <= $0 }) ?? true else { return .undecided }
            // On the boundary the distance is exactly 0: outside only with no margin.
            if location == .boundary { return margin <= 0 ? .outside : .undecided }
            return margin <= 0 || shape.isAtLeast(margin, from: frame()) ? .outside : .undecided
        }
    }
}
