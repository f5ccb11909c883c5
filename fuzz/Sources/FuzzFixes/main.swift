// libFuzzer harness: a fixes file as `judge --fixes` reads it. The first
// byte selects the format (even: CSV with its header, odd: NDJSON) and the
// size of the chunks the bytes arrive in (1 to 128 bytes, so a quote, a CRLF,
// a UTF-8 sequence or a number can be cut anywhere); the rest is the file.
// Every row is read to its end and validated, as a batch does: the CSV
// reader (both its fast path for plain lines and its byte loop), the JSON
// reader, the decimal reader behind coordinates and Unix seconds, and the
// timestamp parser.
import FuzzMain
import Glibc
import GeofenceCore

func fuzzFixes(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let chunk = Int(data[0] >> 1) + 1
    var at = 0
    let source: () throws -> [UInt8]? = {
        guard at < bytes.count else { return nil }
        defer { at += chunk }
        return Array(bytes[at..<min(bytes.count, at + chunk)])
    }
    func drain<I: IteratorProtocol>(_ rows: inout I) where I.Element == FixRow {
        while let row = rows.next() {
            if row.readError != nil { return }
            switch row.validated {
            case .success(let fix): _ = fix.ts.storageText
            case .failure(let why): _ = why.reason
            }
        }
    }
    if data[0] & 1 == 0 {
        guard var csv = try? FixLines.CSV(path: "fuzz.csv", source: source) else { return 0 }
        drain(&csv)
    } else {
        var ndjson = FixLines.NDJSON(path: "fuzz.ndjson", source: source)
        drain(&ndjson)
    }
    return 0
}

runFuzzer(fuzzFixes)
