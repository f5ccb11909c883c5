import GeofenceCore

/// Reads a GeoJSON file's features and makes their gf_areas rows on a thread
/// of its own, while the importer's thread checks (GEOS) and inserts the
/// ones before, so on two cores an import takes about as long as the slower
/// of the two: parsing for a small catalog, inserting for a large one,
/// whose b-trees are deeper.
///
/// The importer sees exactly what a sequential loop would: features in file
/// order, and at the first bad one the same error (with file, feature index
/// and id), after every feature before it. Nothing is parsed past an error,
/// and when the importer stops early (a failed insert) the thread is told to
/// stop and is waited for before the import returns.
struct FeatureParser {
    struct Parsed {
        /// The number naming the feature in errors: its index in a GeoJSON file, its fid in a GDAL layer.
        var index: Int
        var area: AreaDefinition
        /// The gf_areas row, ready to check and insert.
        var row: AreaStore.Row
    }

    /// One batch of parsed features, or the error that ended parsing, with
    /// how far the parser had read (for progress): bytes of a file, features of a stream.
    enum Batch {
        case features([Parsed], read: Int)
        case failed(Error)
    }

    /// The collection's members other than `features`, complete when parsing has ended.
    private(set) var foreignMembers: [(String, JSONValue)] = []
    /// How much there is to read: the file's size in bytes, or a stream's
    /// feature count (0 when unknown).
    let total: Int

    private let source: FeatureSource

    /// Reads `path`, or when `stream` is given, the features it carries (errors still name `path`).
    init(path: String, keys: FeatureKeys, stream: ImportStream? = nil) throws {
        if let stream {
            source = FeatureSource(stream: stream, path: path, keys: keys)
            total = stream.count ?? 0
        } else {
            let file = try FileChunks(path: path)
            source = FeatureSource(file: file, path: path, keys: keys)
            total = file.size
        }
    }

    /// Runs `consume` on the calling thread over batches parsed on another.
    mutating func run(_ consume: (Batch) throws -> Void) throws {
        let handoff = Handoff<Batch>(capacity: 8)
        let source = self.source
        var failure: Error?
        let parsing = Parallel.spawn { Self.produce(source, into: handoff) }
        if parsing == nil {
            // No second thread: parse everything first, then insert (memory, not a hang).
            handoff.removeLimit()
            Self.produce(source, into: handoff)
        }
        do {
            while let batch = handoff.take() { try consume(batch) }
        } catch {
            failure = error
            handoff.cancel()
        }
        if let parsing { Parallel.join(parsing) }
        if let failure { throw failure }
        foreignMembers = source.members
    }

    private static func produce(_ source: FeatureSource, into handoff: Handoff<Batch>) {
        defer { handoff.finish() }
        var batch: [Parsed] = []
        batch.reserveCapacity(64)
        // Whatever was parsed before the error goes first, so the importer meets them in order.
        func stop(_ error: Error) {
            _ = handoff.put(.features(batch, read: source.read))
            _ = handoff.put(.failed(error))
        }
        while true {
            let next: (feature: JSONValue, index: Int)?
            do { next = try source.next() } catch { stop(error); return }
            guard let (f, index) = next else { break }
            let idHint = GeoJSONArea.idAsStored(in: f, keys: source.keys)
            do {
                let area = try GeoJSONArea.area(from: f, keys: source.keys)
                batch.append(Parsed(index: index, area: area, row: AreaStore.Row(area)))
            } catch {
                stop((error as? InputError)?.located(file: source.path, item: source.item(index), id: idHint) ?? error)
                return
            }
            if batch.count == 64 {
                guard handoff.put(.features(batch, read: source.read)) else { return }
                batch.removeAll(keepingCapacity: true)
            }
        }
        _ = handoff.put(.features(batch, read: source.read))
    }
}

/// Where the parsing thread takes features from: the engine's reader of a
/// GeoJSON file (a FeatureCollection, or a sequence when its name says so),
/// or another reader's stream. Either way a feature comes with the number
/// that names it in errors (its index in the file, or its fid), and every
/// error is located in the user's file.
final class FeatureSource: @unchecked Sendable {
    let path: String
    let keys: FeatureKeys
    private let file: FileChunks?
    private var reader: FeatureCollectionReader?
    private let stream: ImportStream?
    /// The collection's members other than `features`, complete once `next()` has returned nil.
    private(set) var members: [(String, JSONValue)] = []

    init(file: FileChunks, path: String, keys: FeatureKeys) {
        self.file = file; self.path = path; self.keys = keys; stream = nil
        let json = JSONReader(chunks: file.next)
        reader = FeatureCollectionReader.namesSequence(path) ? FeatureCollectionReader(sequence: json) : FeatureCollectionReader(json)
    }

    init(stream: ImportStream, path: String, keys: FeatureKeys) {
        self.stream = stream; self.path = path; self.keys = keys; file = nil
    }

    /// How far reading has got, for progress: bytes of a file, features of a stream.
    var read: Int { file?.bytesRead ?? featuresRead }
    private var featuresRead = 0

    /// How the feature numbered `index` is named in errors.
    func item(_ index: Int) -> String { ImportStream.item(index, layer: stream?.layer) }

    /// The next feature and its number, nil at the end; errors name the file
    /// (and, for malformed GeoJSON, the feature it was in).
    func next() throws -> (feature: JSONValue, index: Int)? {
        if let stream {
            do {
                guard let (feature, fid) = try stream.next() else { members = stream.members; return nil }
                featuresRead += 1
                return (feature, Int(fid))
            } catch let e as ImportStream.FeatureError {
                throw e.error.located(file: path, id: GeoJSONArea.idAsStored(in: e.readable, keys: keys))
            } catch let e as InputError { throw e.located(file: path) }
        }
        do {
            guard let feature = try reader!.next() else { members = reader!.foreignMembers; return nil }
            return (feature, reader!.featureIndex)
        } catch let e as JSONSyntaxError {
            let index = reader!.featureIndex
            throw InputError("malformed GeoJSON at \(e)", file: path, item: index >= 0 ? item(index) : nil)
        } catch let e as InputError { throw e.located(file: path) }
    }
}
