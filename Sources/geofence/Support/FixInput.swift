import GeofenceCore
import GeofenceSQL

/// `--fixes-format` of the commands that read `--fixes` (judge, locate).
let fixesFormatHelp = "Format of --fixes: csv or ndjson, whatever the file's name; default: by the name (.ndjson, .jsonl: NDJSON), CSV for - (standard input)."

/// The fixes of `--fixes NAME`, `-` for standard input, in `format` when
/// given (whatever the name), else NDJSON for a name ending .ndjson or .jsonl
/// and CSV for any other name and for standard input. A CSV header must name
/// the `required` columns.
func fixRows(_ name: String, format: EventFormat?, required: [String] = FixSources.columns) throws -> AnySequence<FixRow> {
    guard name == standardStream else { return try FixSources.file(name, required: required, ndjson: format.map { $0 == .ndjson }) }
    return try FixSources.file("/dev/stdin", name: "standard input", required: required, ndjson: format == .ndjson)
}
