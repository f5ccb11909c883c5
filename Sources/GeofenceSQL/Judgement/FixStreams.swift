import GeofenceCore

extension FixSources {
    /// NDJSON fixes from a path whose name does not say so (standard input
    /// as /dev/stdin); `name` is the one errors give.
    public static func ndjson(_ path: String, name: String) throws -> AnySequence<Judgement.Row> {
        let chunks = try FileChunks(path: path)
        var lines = NDJSONFixes(path: name, chunks: chunks)
        return AnySequence(ReadAhead { lines.next() })
    }
}
