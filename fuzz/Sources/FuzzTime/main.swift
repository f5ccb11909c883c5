// libFuzzer harness: the time parsers. The first byte selects the parser:
// even → the fix timestamp parser (ISO 8601 / Unix seconds, as `judge` reads
// every row), odd → the TZif decoder with its POSIX-rule footer (what
// `timezone` names load from tzdata), then a few local-time conversions
// across the range a fix can have.
import FuzzMain
import Glibc
import GeofenceCore

func fuzzTime(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let rest = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if data[0] & 1 == 0 {
        if let t = try? Timestamp.parse(String(decoding: rest, as: UTF8.self)) {
            _ = t.description
            _ = t.storageText
        }
    } else if let zone = TimeZone.parse(name: "fuzz", rest) {
        for seconds in stride(from: Int64(-4_000_000_000), through: 8_000_000_000, by: 700_000_000) {
            _ = zone.local(Timestamp(microseconds: seconds * 1_000_000))
        }
    }
    return 0
}

runFuzzer(fuzzTime)
