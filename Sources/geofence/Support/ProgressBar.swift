@preconcurrency import Glibc

/// Progress of a long command on stderr, only when stderr is a terminal
/// (nothing on a pipe or in a log file):
///
///     judging   412,000 / 1,000,000 fixes  41%  183,402 fixes/s  ETA 3 s
///
/// The line is rewritten in place at most five times a second, and once more
/// when the work is done, ending with the time taken instead of the ETA and a
/// newline: one final line, whatever the caller reports after it.
final class ProgressBar {
    private let label: String
    private let unit: String
    private let divisor: Double
    private let enabled = isatty(2) != 0
    private let start = ProgressBar.now()
    private var lastDrawn = -1.0
    private var finished = false
    private var drawnSoFar = 0

    /// `divisor` turns the caller's counts into `unit`s (bytes into MB: 1e6).
    init(label: String, unit: String, divisor: Double = 1) {
        self.label = label; self.unit = unit; self.divisor = divisor
    }

    func update(_ done: Int, _ total: Int) {
        guard enabled, !finished else { return }
        guard total > 0 else { return unbounded(done) }
        let t = Self.now()
        let complete = done >= total
        if !complete && t - lastDrawn < 0.2 { return }
        lastDrawn = t
        let elapsed = t - start
        let amount = Double(min(done, total)) / divisor, whole = Double(total) / divisor
        let rate = elapsed > 0 ? amount / elapsed : 0
        var line = "\r\(label) \(Self.grouped(amount)) / \(Self.grouped(whole)) \(unit)  \(Int(100 * amount / whole))%"
        if rate > 0 { line += "  \(Self.grouped(rate)) \(unit)/s" }
        if complete {
            line += "  in \(Self.duration(elapsed))"
        } else if rate > 0 {
            line += "  ETA \(Self.duration((whole - amount) / rate))"
        }
        fputs(line + "\u{1B}[K" + (complete ? "\n" : ""), stderr)  // ESC[K: clear what a longer line left
        finished = complete
    }

    /// A source of unknown size (a pipe from GDAL): how much so far and how
    /// fast, with no percentage or ETA; `finish` writes the final line.
    private func unbounded(_ done: Int) {
        let t = Self.now()
        if done == 0 || t - lastDrawn < 0.2 { return }
        lastDrawn = t
        drawnSoFar = done
        let amount = Double(done) / divisor, elapsed = t - start
        fputs("\r\(label) \(Self.grouped(amount)) \(unit)  \(Self.grouped(elapsed > 0 ? amount / elapsed : 0)) \(unit)/s\u{1B}[K", stderr)
    }

    /// Ends a line drawn without a known total (nothing if none was drawn).
    func finish() {
        guard enabled, !finished, drawnSoFar > 0 else { return }
        let elapsed = Self.now() - start
        fputs("\r\(label) \(Self.grouped(Double(drawnSoFar) / divisor)) \(unit)  in \(Self.duration(elapsed))\u{1B}[K\n", stderr)
        finished = true
    }

    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// 1234567.8 as "1,234,568"; below 10, one decimal ("2.5").
    static func grouped(_ v: Double) -> String {
        if v < 10 { return String(Double(Int(v * 10)) / 10) }
        var digits = String(Int(v.rounded()))
        var out = ""
        while digits.count > 3 { out = "," + digits.suffix(3) + out; digits.removeLast(3) }
        return digits + out
    }

    static func duration(_ s: Double) -> String {
        guard s.isFinite else { return "?" }
        if s < 10 { return "\(Double(Int(s * 10)) / 10) s" }
        let n = Int(s.rounded(.up))
        if n < 60 { return "\(n) s" }
        if n < 3600 { return "\(n / 60) min \(n % 60) s" }
        return "\(n / 3600) h \(n % 3600 / 60) min"
    }
}
