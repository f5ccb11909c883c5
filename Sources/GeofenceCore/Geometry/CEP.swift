#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Accuracy as a CEP68 radius and its rescaling to other confidences (behaviour §3).
///
/// A fix's `accuracy_m` is the radius that holds the true position with 68 %
/// probability under a circular Gaussian error. For confidence p the radius
/// grows by k(p) = sqrt(ln(1-p) / ln(1-0.68)), which reproduces HERE's table
/// (CEP50 0.78, CEP90 1.42, CEP95 1.62, CEP99 2.01).
public enum CEP {
    public static let baseConfidence = 0.68

    /// k(p) for p in [0, 1); k(0) = 0 (plain point containment).
    public static func factor(_ p: Double) -> Double {
        precondition(p >= 0 && p < 1, "confidence must be in [0, 1)")
        if p == 0 { return 0 }
        return (log(1 - p) / log(1 - baseConfidence)).squareRoot()
    }

    /// The Gaussian's per-axis standard deviation for a CEP68 radius:
    /// σ = accuracy / sqrt(-2 ln 0.32) ≈ accuracy / 1.5096.
    public static func sigma(forAccuracy accuracy: Double) -> Double {
        accuracy / (-2 * log(1 - baseConfidence)).squareRoot()
    }
}
