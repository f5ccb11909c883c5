import GeofenceCore

/// Tables for people, JSON and CSV for scripts: every listing command offers all three.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON (an array of objects) instead of a table.")
    var json = false
    @Flag(help: "Print CSV with a header row instead of a table.")
    var csv = false

    func validate() throws {
        if json && csv { throw ValidationError("choose one of --json and --csv") }
    }

    /// Cells are nil for NULL. JSON keeps numbers as numbers when `numeric` says so.
    func print(columns: [String], rows: [[String?]], numeric: Set<String> = []) {
        if json {
            let items = rows.map { row in
                JSONValue.object(zip(columns, row).map { name, cell in
                    guard let cell else { return (name, .null) }
                    if numeric.contains(name), Double(cell) != nil { return (name, .number(cell)) }
                    if cell.hasPrefix("{") || cell.hasPrefix("["), let v = try? JSONReader.parse(cell, strict: false) { return (name, v) }
                    return (name, .string(cell))
                })
            }
            Swift.print(JSONValue.array(items).serialized)
        } else if csv {
            Swift.print(columns.map(csvField).joined(separator: ","))
            for row in rows { Swift.print(row.map { csvField($0 ?? "") }.joined(separator: ",")) }
        } else {
            Swift.print(table(columns: columns, rows: rows), terminator: "")
        }
    }
}

/// Bytes, not Characters: "\r\n" is one Character equal to neither "\r" nor
/// "\n", so a Character test would leave such a field unquoted.
/// A field with a space or tab at either end is quoted too: this tool's own
/// readers drop such characters from an unquoted field (`a , …`), so ` u1`
/// written bare would come back as `u1`.
func csvField(_ s: String) -> String {
    // A native string's bytes are scanned in place (every field of every event line passes here).
    let quoted = s.utf8.withContiguousStorageIfAvailable(csvNeedsQuotes) ?? csvNeedsQuotes(Array(s.utf8))
    return quoted ? "\"" + s.replacingAll("\"", with: "\"\"") + "\"" : s
}

/// A comma, a quote or a line break inside, or a space or tab at either end.
private func csvNeedsQuotes<C: BidirectionalCollection>(_ bytes: C) -> Bool where C.Element == UInt8 {
    func edge(_ b: UInt8?) -> Bool { b == 0x20 || b == 0x09 }
    return bytes.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) || edge(bytes.first) || edge(bytes.last)
}

func table(columns: [String], rows: [[String?]]) -> String {
    let cells = rows.map { $0.map { $0 ?? "" } }
    var widths = columns.map(\.count)
    for row in cells { for (i, c) in row.enumerated() { widths[i] = max(widths[i], c.count) } }
    func line(_ r: [String]) -> String {
        r.enumerated().map { $1 + String(repeating: " ", count: widths[$0] - $1.count) }.joined(separator: "  ")
            .trimmingTrailingSpaces() + "\n"
    }
    var out = line(columns)
    out += line(widths.map { String(repeating: "-", count: $0) })
    for r in cells { out += line(r) }
    return out
}

extension String {
    func replacingAll(_ a: String, with b: String) -> String { split(separator: a, omittingEmptySubsequences: false).joined(separator: b) }
    /// Without its trailing spaces, found by their bytes: a space is one
    /// byte, and never part of another character's bytes. (Dropping the
    /// last Character while it was a space broke graphemes afresh at each
    /// step: a table's line padded by a 4 KB property took seconds.)
    func trimmingTrailingSpaces() -> String {
        var end = utf8.endIndex
        while end > utf8.startIndex, utf8[utf8.index(before: end)] == UInt8(ascii: " ") { end = utf8.index(before: end) }
        // Decoded from the bytes: a String's slice would round to a
        // Character boundary, and a space can end a Character (after U+0600).
        return String(decoding: utf8[..<end], as: UTF8.self)
    }
}

import ArgumentParser
