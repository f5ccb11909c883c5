/// Splits a byte stream into numbered UTF-8 lines.
struct LineSplitter {
    var next_: () throws -> [UInt8]?
    var pending: [UInt8] = []
    var start = 0
    var number = 0
    var done = false
    var readError: String?
    init(chunks: @escaping () throws -> [UInt8]?) { next_ = chunks }

    /// The next line and its number. A line ends at LF, CRLF or a lone CR,
    /// as a CSV line does; a byte-order mark before the first is skipped.
    mutating func next() -> (Int, String)? {
        while true {
            if let end = pending[start...].firstIndex(where: { $0 == 0x0A || $0 == 0x0D }) {
                var after = end + 1
                if pending[end] == 0x0D {
                    // A CR last in what was read may be the first half of a CRLF.
                    if after == pending.count && !done { _ = readMore(); continue }
                    if after < pending.count && pending[after] == 0x0A { after += 1 }
                }
                return emit(start..<end, resumingAt: after)
            }
            if done {
                guard start < pending.count else { return nil }
                return emit(start..<pending.count, resumingAt: pending.count)
            }
            _ = readMore()
        }
    }

    private mutating func emit(_ range: Range<Int>, resumingAt next: Int) -> (Int, String)? {
        var range = range
        if number == 0, range.count >= 3, pending[range.lowerBound] == 0xEF, pending[range.lowerBound + 1] == 0xBB,
           pending[range.lowerBound + 2] == 0xBF {
            range = (range.lowerBound + 3)..<range.upperBound
        }
        start = next
        number += 1
        // Not UTF-8: the file cannot be read from here (as a CSV file), never
        // repaired into U+FFFD, which would make `b\xff` and `b\xfe` one subject.
        guard let text = pending.withUnsafeBufferPointer({ CSVReader.text(UnsafeBufferPointer(rebasing: $0[range])) }) else {
            notUTF8 = true
            done = true
            pending = []
            start = 0
            return nil
        }
        return (number, text)
    }

    /// Set when a line's bytes were not UTF-8 (line `number`): the lines stop there.
    var notUTF8 = false

    /// Appends the next chunk after the unfinished line; false at the end.
    private mutating func readMore() -> Bool {
        pending.removeSubrange(..<start)
        start = 0
        do {
            if let c = try next_() { pending += c; return true }
            done = true
        } catch {
            // A read error ends the stream; `NDJSON` reports it as one more invalid row.
            done = true
            readError = "\(error)"
        }
        return false
    }
}
