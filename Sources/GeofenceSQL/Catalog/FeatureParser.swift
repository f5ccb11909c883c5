import GeofenceCore

/// Reads a GeoJSON file's features and makes their gf_areas rows on a thread
/// of its own, while the importer's thread checks (GEOS) and inserts the
/// ones before, so on two cores an import takes about as long as the slower
/// of the two: parsing on the 100,000-area benchmark, inserting into the
/// larger b-trees of a million areas.
///
/// The importer sees exactly what a sequential loop would: features in file
/// order, and at the first bad one the same error (with file, feature index
/// and id), after every feature before it. Nothing is parsed past an error,
/// and when the importer stops early (a failed insert) the thread is told to
/// stop and is waited for before the import returns.
struct FeatureParser {
    struct Parsed {
        var index: Int
        var area: AreaDefinition
        /// The feature's id as written, for naming it in an error.
        var idHint: String?
        /// The gf_areas row, ready to check and insert.
        var row: AreaStore.Row
    }

    /// One batch of parsed features, or the error that ended parsing, with
    /// how far into the file the parser had read (for progress).
    enum Batch {
        case features([Parsed], bytesRead: Int)
        case failed(Error)
    }

    /// The collection's members other than `features`, complete when parsing has ended.
    private(set) var foreignMembers: [(String, JSONValue)] = []
    let fileSize: Int

    private let file: FileChunks
    private let path: String
    private let group: String?
    private let stream: ImportStream?

    /// Reads `path`, or when `stream` is given, the GeoJSON it carries (errors still name `path`).
    init(path: String, group: String?, stream: ImportStream? = nil) throws {
        file = try FileChunks(path: stream?.path ?? path)
        fileSize = file.size
        self.path = path
        self.group = group
        self.stream = stream
    }

    /// Runs `consume` on the calling thread over batches parsed on another.
    mutating func run(_ consume: (Batch) throws -> Void) throws {
        let handoff = Handoff<Batch>(capacity: 8)
        let members = Box<[(String, JSONValue)]>([])
        let (file, path, group, stream) = (self.file, self.path, self.group, self.stream)
        var failure: Error?
        let parsing = Parallel.spawn { Self.produce(file: file, path: path, group: group, stream: stream, into: handoff, members: members) }
        if parsing == nil {
            // No second thread: parse everything first, then insert (memory, not a hang).
            handoff.removeLimit()
            Self.produce(file: file, path: path, group: group, stream: stream, into: handoff, members: members)
        }
        do {
            while let batch = handoff.take() { try consume(batch) }
        } catch {
            failure = error
            handoff.cancel()
        }
        if let parsing { Parallel.join(parsing) }
        if let failure { throw failure }
        foreignMembers = members.value
    }

    private static func produce(file: FileChunks, path: String, group: String?, stream: ImportStream?,
                                into handoff: Handoff<Batch>, members: Box<[(String, JSONValue)]>) {
        defer { handoff.finish() }
        // GDAL's stream is a FeatureCollection; a file is read by its name.
        let json = JSONReader(chunks: file.next)
        var reader = stream == nil && FeatureCollectionReader.namesSequence(path)
            ? FeatureCollectionReader(sequence: json) : FeatureCollectionReader(json)
        var batch: [Parsed] = []
        batch.reserveCapacity(64)
        // Whatever was parsed before the error goes first, so the importer meets them in order.
        func stop(_ error: Error) {
            _ = handoff.put(.features(batch, bytesRead: file.bytesRead))
            _ = handoff.put(.failed(error))
        }
        while true {
            let feature: JSONValue?
            do {
                feature = try reader.next()
            } catch {
                let index = reader.featureIndex
                // A producer that failed part way leaves malformed GeoJSON: its own error says why.
                do { try stream?.finish(true) } catch { stop(error); return }
                stop((error as? JSONSyntaxError).map {
                    InputError("malformed GeoJSON at \($0)", file: path,
                               item: index >= 0 ? ImportStream.item(index, layer: stream?.layer) : nil)
                } ?? (error as? InputError)?.located(file: path) ?? error)
                return
            }
            guard var f = feature else {
                do { try stream?.finish(false) } catch { stop(error); return }
                break
            }
            if stream != nil { f = ImportStream.droppingNullProperties(f) }
            let index = reader.featureIndex
            let idHint = f["properties"]?["area_id"]?.plainText ?? f["id"]?.plainText
            do {
                let area = try GeoJSONArea.area(from: f, group: group)
                batch.append(Parsed(index: index, area: area, idHint: idHint, row: AreaStore.Row(area)))
            } catch {
                stop((error as? InputError)?.located(file: path, item: ImportStream.item(index, layer: stream?.layer), id: idHint) ?? error)
                return
            }
            if batch.count == 64 {
                guard handoff.put(.features(batch, bytesRead: file.bytesRead)) else { return }
                batch.removeAll(keepingCapacity: true)
            }
        }
        _ = handoff.put(.features(batch, bytesRead: file.bytesRead))
        members.value = reader.foreignMembers
    }
}

/// A value handed to another thread that only one thread uses at a time
/// (the handoff orders the accesses).
final class Box<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
