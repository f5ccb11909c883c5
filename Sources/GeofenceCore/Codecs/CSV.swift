/// RFC 4180 CSV: comma-separated, double-quoted fields with "" for a quote,
/// CRLF or LF line ends. A UTF-8 byte-order mark at the start is skipped.
public enum CSVFile {
    public static func read(path: String) throws -> [[String]] {
        let file = try FileChunks(path: path)
        var bytes: [UInt8] = []
        while let chunk = try file.next() { bytes += chunk }
        do { return try parse(bytes) } catch let e as InputError { throw e.located(file: path) }
    }

    public static func parse(_ input: [UInt8]) throws -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field: [UInt8] = []
        var i = input.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var quoted = false, wasQuoted = false
        var line = 1
        func endField() throws {
            guard let s = String(validating: field, as: UTF8.self) else {
                throw InputError("field \(row.count + 1) is not valid UTF-8", item: "line \(line)")
            }
            row.append(s); field.removeAll(keepingCapacity: true); wasQuoted = false
        }
        while i < input.count {
            let b = input[i]
            if quoted {
                if b == 0x22 {
                    if i + 1 < input.count && input[i + 1] == 0x22 { field.append(0x22); i += 1 } else { quoted = false }
                } else {
                    if b == 0x0A { line += 1 }
                    field.append(b)
                }
            } else {
                switch b {
                case 0x22:
                    guard field.isEmpty && !wasQuoted else { throw InputError("stray quote inside an unquoted field", item: "line \(line)") }
                    quoted = true; wasQuoted = true
                case 0x2C: try endField()
                case 0x0D: break
                case 0x0A: try endField(); rows.append(row); row = []; line += 1
                default: field.append(b)
                }
            }
            i += 1
        }
        if quoted { throw InputError("unterminated quoted field", item: "line \(line)") }
        if !field.isEmpty || !row.isEmpty || wasQuoted { try endField(); rows.append(row) }
        return rows
    }
}
