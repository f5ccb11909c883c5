import GeofenceSQL

/// The CSV lines of `locate --fixes`: `row,area_id,verdict`, one per pair.
///
/// Built as bytes: a batch can give tens of millions of pairs, and a String
/// per row number and per line would be most of the command. A fix has a
/// dozen pairs and an area thousands: each area's CSV field is made once
/// (`fields`, all in one array, at `at`: no array per area to retain per
/// pair) and each row number once. One instance formats a whole batch, chunk
/// after chunk, on one thread.
struct PairsCSV {
    static let header = Array("row,area_id,verdict\n".utf8)
    private let inside = Array(",inside\n".utf8), undecided = Array(",undecided\n".utf8)
    private var fields: [UInt8] = [], at: [Range<Int>?] = [], version = -1
    private var row = -1, rowField: [UInt8] = []

    /// Appends the lines of `pairs` to `buffer`, calling `flush` whenever it holds more than 64 KiB.
    mutating func append(_ pairs: BatchLocate.Pairs, to buffer: inout [UInt8], flush: (inout [UInt8]) throws -> Void) rethrows {
        if pairs.idsVersion != version || at.count != pairs.ids.count {
            (version, fields, at) = (pairs.idsVersion, [], Array(repeating: nil, count: pairs.ids.count))
        }
        for pair in pairs.all where at[Int(pair.area)] == nil {
            let start = fields.count
            fields += csvField(pairs.ids[Int(pair.area)]).utf8
            at[Int(pair.area)] = start..<fields.count
        }
        let (inside, undecided, at) = (self.inside, self.undecided, self.at)
        var (row, rowField) = (self.row, self.rowField)
        defer { (self.row, self.rowField) = (row, rowField) }
        try fields.withUnsafeBufferPointer { fields in
            for pair in pairs.all {
                if pair.row != row {
                    row = pair.row
                    rowField.removeAll(keepingCapacity: true)
                    appendDecimal(row, to: &rowField)
                    rowField.append(0x2C)
                }
                buffer += rowField
                if let r = at[Int(pair.area)] { buffer += UnsafeBufferPointer(rebasing: fields[r]) }
                buffer += pair.verdict == .inside ? inside : undecided
                if buffer.count > 1 << 16 { try flush(&buffer) }
            }
        }
    }
}
