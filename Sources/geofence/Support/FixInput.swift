import ArgumentParser
import GeofenceCore
import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `--fixes-format` of the commands that read `--fixes` (judge, locate).
let fixesFormatHelp = "Format of --fixes: csv, ndjson or columns (the binary fix columns the Python wrappers write), whatever the file's name; default: by the name (.ndjson, .jsonl: NDJSON; .fixcols: columns), CSV for - (standard input)."

extension FixSources.FileFormat: ExpressibleByArgument {}

/// The fixes of `--fixes NAME`, `-` for standard input, in `format` when
/// given (whatever the name), else NDJSON for a name ending .ndjson or .jsonl
/// and CSV for any other name and for standard input. A CSV header must name
/// the `required` columns (engine fields, by the names `feed` gives them).
/// `spooled`: where `spooledFixes` put a stream's fixes.
func fixRows(_ name: String, format: FixSources.FileFormat?, required: [String] = FixSources.columns, spooled: String? = nil,
             feed: FixFeed = .standard) throws -> AnySequence<FixRow> {
    try fixRows(name, format: format, required: required, spooled: spooled, feed: feed, each: { $0 })
}

/// The same, each row made into what the caller keeps of it on the reading thread (`FixSources.file`).
func fixRows<Kept>(_ name: String, format: FixSources.FileFormat?, required: [String] = FixSources.columns, spooled: String? = nil,
                   feed: FixFeed = .standard, each: @escaping (FixRow) -> Kept) throws -> AnySequence<Kept> {
    guard name == standardStream else {
        // The name says the format, also of a spooled copy (whose name does not).
        return try FixSources.file(spooled ?? name, name: name, required: required, format: format ?? FixSources.FileFormat(named: name),
                                   feed: feed, each: each)
    }
    return try FixSources.file(spooled ?? "/dev/stdin", name: "standard input", required: required, format: format ?? .csv, feed: feed, each: each)
}

/// Fixes that arrive as a stream (standard input, a FIFO) are read to their
/// end into an unlinked temporary file in $TMPDIR before judge takes the
/// database's write lock: read inside the run's transaction, a slow or
/// stalled producer would lock out every other writer (gf_check, another
/// judge) for as long as it took. The path returned reads that file from
/// its start (`/dev/fd/N`); nil for a regular file, read where it is (and
/// for a stream when no temporary file can be made in $TMPDIR or /tmp: it
/// is then read during the run, as it comes).
func spooledFixes(_ name: String) throws -> String? {
    let source = name == standardStream ? "/dev/stdin" : name
    var st = stat()
    guard stat(source, &st) == 0, (st.st_mode & S_IFMT) != S_IFREG else { return nil }
    let shown = name == standardStream ? "standard input" : name
    let tmpdir = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    var made: (fd: Int32, folder: String)?
    for folder in [tmpdir, "/tmp"].compactMap({ $0 }) where made == nil {
        var template = Array((folder + "/geofence-fixes-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { continue }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        made = (fd, folder)
    }
    guard let (fd, folder) = made else { return nil }
    let input = name == standardStream ? 0 : open(source, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else { close(fd); throw InputError("cannot open: \(String(cString: strerror(errno)))", file: shown) }
    defer { if input != 0 { close(input) } }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n >= 0 else { close(fd); throw InputError("read error: \(String(cString: strerror(errno)))", file: shown) }
        if n == 0 { break }
        var written = 0
        while written < n {
            let w = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + written, n - written) }
            if w < 0 && errno == EINTR { continue }
            guard w > 0 else {
                close(fd)
                throw InputError("cannot read it into a temporary file in \(folder): \(String(cString: strerror(errno))); set TMPDIR to a folder with room", file: shown)
            }
            written += w
        }
    }
    return "/dev/fd/\(fd)"
}
