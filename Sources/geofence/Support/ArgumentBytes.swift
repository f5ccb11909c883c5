import Glibc
import GeofenceCore

/// Command-line arguments are read as UTF-8. One that is not (a subject id
/// `b\xff`, a file name in Latin-1) would be repaired into U+FFFD by the
/// argument parser: two ids would become one, and a file would be looked
/// up, or made, under another name. Such an argument is refused first.
enum ArgumentBytes {
    /// Why the first argument that is not UTF-8 is not, if one is not:
    /// its position (1 = the first after the program), the argument as it
    /// would have been read, and its first bad byte.
    static func firstNotUTF8() -> String? {
        for i in 1..<Int(CommandLine.argc) {
            guard let p = CommandLine.unsafeArgv[i] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
            guard String(validating: bytes, as: UTF8.self) == nil else { continue }
            let bad = firstInvalid(bytes)
            let shown = String(decoding: bytes, as: UTF8.self)
            return "argument \(i) (\(Echo.quoted(shown))) is not UTF-8 text: its byte \(bad + 1) is 0x" + Echo.hex([bytes[bad]])
        }
        return nil
    }

    /// The offset of the first byte that starts no valid UTF-8 sequence.
    static func firstInvalid(_ b: UnsafeBufferPointer<UInt8>) -> Int {
        var i = 0
        while i < b.count {
            let lead = b[i]
            let n = lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 0
            guard n > 0, i + n <= b.count,
                  String(validating: UnsafeBufferPointer(rebasing: b[i..<(i + n)]), as: UTF8.self) != nil else { return i }
            i += n
        }
        return max(0, b.count - 1)
    }
}
