#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// IANA time zone names, checked against the system's tz database
/// (Debian's tzdata, /usr/share/zoneinfo), the same data the C library uses.
public enum TimeZoneNames {
    public static let directory = "/usr/share/zoneinfo"

    /// True when `name` is an IANA zone with a TZif file (`Asia/Tokyo`, `UTC`).
    public static func isKnown(_ name: String) -> Bool {
        guard !name.isEmpty, name.count < 64, !name.hasPrefix("/"),
              !name.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }),
              name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || "0123456789/_-+".unicodeScalars.contains($0)) })
        else { return false }
        guard let f = fopen(directory + "/" + name, "rb") else { return false }
        defer { fclose(f) }
        var magic = [UInt8](repeating: 0, count: 4)
        return fread(&magic, 1, 4, f) == 4 && magic == Array("TZif".utf8)
    }

    /// The error for a name that is no zone, with the zone it most likely
    /// meant when only its case is wrong (`asia/tokyo`, `utc`), else what a
    /// zone name looks like (an abbreviation such as JST is none).
    public static func unknown(_ name: String) -> String {
        // Each word capitalised (America/New_York), or the whole name in capitals (UTC).
        var capitalised = "", startOfWord = true
        for c in name where name.utf8.count < 64 {
            capitalised += startOfWord ? c.uppercased() : c.lowercased()
            startOfWord = c == "/" || c == "_" || c == "-"
        }
        if let meant = [capitalised, name.uppercased()].first(where: { $0 != name && isKnown($0) }) {
            return "unknown time zone \(Echo.quoted(name)) (did you mean \(Echo.quoted(meant))?)"
        }
        return "unknown time zone \(Echo.quoted(name)) (an IANA name such as 'Asia/Tokyo' or 'UTC'; an abbreviation such as JST is none)"
    }
}
