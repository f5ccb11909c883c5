import GeofenceSQL

/// The CSV lines of `locate --fixes`: `row,area_id,verdict`, one per pair.
///
/// Built as bytes: a batch can give tens of millions of pairs, and a String
/// per row number and per line would be most of the command. A fix has a
/// dozen pairs and an area thousands: each area's CSV field is made once
/// (`fields`, all in one array, at `at`: no array per area to retain per
/// pair). A slice of a chunk's pairs is written straight into one array of
/// its exact size, measured first (no growth check, no retain per piece).
/// One instance formats a whole batch, chunk after chunk, on one thread.
struct PairsCSV {
    static let header = Array("row,area_id,verdict\n".utf8)
    /// The two verdicts' endings, then every area's field met so far.
    private var fields = Array(",inside\n,undecided\n".utf8), at: [Range<Int>?] = [], version = -1
    private static let inside = 0..<8, undecided = 8..<19

    /// The lines of `pairs.all[range]`, in their order.
    mutating func lines(_ pairs: BatchLocate.Pairs, _ range: Range<Int>) -> [UInt8] {
        if pairs.idsVersion != version || at.count != pairs.ids.count {
            version = pairs.idsVersion
            fields.removeSubrange(Self.undecided.upperBound...)
            at = Array(repeating: nil, count: pairs.ids.count)
        }
        var total = 0, row = -1, rowLength = 0
        for pair in pairs.all[range] {
            if at[Int(pair.area)] == nil {
                let start = fields.count
                fields += csvField(pairs.ids[Int(pair.area)]).utf8
                at[Int(pair.area)] = start..<fields.count
            }
            if pair.row != row { (row, rowLength) = (pair.row, decimalLength(pair.row) + 1) }
            total += rowLength + (at[Int(pair.area)]?.count ?? 0) + (pair.verdict == .inside ? Self.inside : Self.undecided).count
        }
        let at = self.at
        return fields.withUnsafeBufferPointer { fields in
            [UInt8](unsafeUninitializedCapacity: total) { out, count in
                var w = 0, row = -1, rowField = 0..<0
                func copy(_ r: Range<Int>, from source: UnsafeBufferPointer<UInt8>) {
                    for k in r { out[w] = source[k]; w += 1 }
                }
                for pair in pairs.all[range] {
                    if pair.row == row {
                        // The row's field as written on its first line.
                        copy(rowField, from: UnsafeBufferPointer(out))
                    } else {
                        row = pair.row
                        let start = w
                        w += writeDecimal(row, into: out, at: w)
                        out[w] = 0x2C
                        w += 1
                        rowField = start..<w
                    }
                    if let r = at[Int(pair.area)] { copy(r, from: fields) }
                    copy(pair.verdict == .inside ? Self.inside : Self.undecided, from: fields)
                }
                count = w
            }
        }
    }
}

/// The number of bytes `n` (≥ 0) takes in decimal.
private func decimalLength(_ n: Int) -> Int {
    var (v, length) = (n, 1)
    while v >= 10 { v /= 10; length += 1 }
    return length
}

/// Writes `n` (≥ 0) in decimal at `out[at...]`, returning its length.
private func writeDecimal(_ n: Int, into out: UnsafeMutableBufferPointer<UInt8>, at: Int) -> Int {
    let length = decimalLength(n)
    var v = n
    for k in stride(from: at + length - 1, through: at, by: -1) {
        out[k] = UInt8(ascii: "0") + UInt8(v % 10)
        v /= 10
    }
    return length
}
