/// Input quoted back in an error message. A message is one line a person
/// reads, and SQLite and C callers see it as a NUL-terminated string, so a
/// control character (NUL, a newline) is written as `\u0000`, and a value
/// longer than `limit` characters is cut, with an ellipsis and its length:
/// a 10 MB field must not become a 10 MB error line.
public enum Echo {
    public static let limit = 200

    /// `'text'`, made safe to print as above.
    public static func quoted(_ s: String) -> String { "'" + plain(s) + "'" }

    /// The same without the quotes.
    public static func plain(_ s: String) -> String {
        // Most values are short and printable: returned as they are.
        if s.utf8.count <= limit && !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return s }
        var out = ""
        var count = 0
        for u in s.unicodeScalars {
            if count == limit {
                out += "… (\(s.utf8.count) bytes)"
                break
            }
            if u.value < 0x20 || u.value == 0x7F {
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(u)
            }
            count += 1
        }
        return out
    }

    /// A name (a layer's, a column's) quoted for a message that may list
    /// several: besides what `quoted` escapes, a `'` inside it is written
    /// `\'` and a backslash `\\`, so a name ends only at a quote that is not
    /// escaped and `'a', 'b'` is never one name; a byte that is not part of
    /// UTF-8 text is written `\xFF`, so a name is shown by its own bytes.
    public static func name(_ s: String) -> String { name(bytes: Array(s.utf8)) }

    /// The same for a name given as bytes, which need not be UTF-8.
    public static func name(bytes: [UInt8]) -> String {
        var out = ""
        var i = 0
        while i < bytes.count {
            guard let (scalar, length) = scalar(in: bytes, at: i) else {
                out += "\\x" + hex([bytes[i]])
                i += 1
                continue
            }
            if scalar == "'" || scalar == "\\" { out += "\\" }
            out.unicodeScalars.append(scalar)
            i += length
        }
        return "'" + plain(out) + "'"
    }

    /// The Unicode scalar whose UTF-8 starts at `bytes[i]`, and its length; nil when none does.
    private static func scalar(in bytes: [UInt8], at i: Int) -> (Unicode.Scalar, Int)? {
        for length in 1...4 where i + length <= bytes.count {
            if let s = String(validating: bytes[i..<(i + length)], as: UTF8.self), let u = s.unicodeScalars.first {
                return (u, length)
            }
        }
        return nil
    }

    /// Bytes in hexadecimal, two digits each (`62FF`), for a message about
    /// bytes that are not text.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined()
    }

    /// A word of a command a message suggests (a file name), quoted for a
    /// POSIX shell when it holds anything but plain characters, so that
    /// the command can be pasted as it is: `my fences.db` is `'my fences.db'`.
    public static func shellWord(_ s: String) -> String {
        let plain = !s.isEmpty && s.utf8.allSatisfy { b in
            (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || "_./:=@%+-,".utf8.contains(b)
        }
        return plain ? s : "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
