import GeofenceCore

/// Prepared shapes keyed by the exact bytes of their BLOB.
///
/// Parsing a polygon and building its edge index costs far more than hashing
/// and comparing its bytes, so each distinct geometry is prepared once per
/// connection and reused across rows. The key is the content itself (hash,
/// then a full byte comparison), so an updated or deleted geometry can never
/// be judged with a stale copy: a changed BLOB is simply a different key.
final class ShapeCache {
    private var entries: [UInt64: [(bytes: [UInt8], shape: PreparedShape)]] = [:]
    private var count = 0
    private let capacity: Int

    init(capacity: Int = 20_000) { self.capacity = capacity }

    func shape(for bytes: UnsafeRawBufferPointer, parse: () throws -> Shape) rethrows -> PreparedShape {
        let h = Self.hash(bytes)
        if let bucket = entries[h] {
            for e in bucket where e.bytes.count == bytes.count {
                let same = e.bytes.withUnsafeBytes { memcmpEqual($0, bytes) }
                if same { return e.shape }
            }
        }
        let prepared = PreparedShape(try parse())
        if count >= capacity { entries.removeAll(keepingCapacity: true); count = 0 }
        entries[h, default: []].append((Array(bytes), prepared))
        count += 1
        return prepared
    }

    /// FNV-1a over 8-byte words, then the tail: fast and good enough for a
    /// table whose hits are verified byte for byte.
    static func hash(_ b: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        let words = b.count / 8
        for i in 0..<words {
            h = (h ^ b.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) &* 0x0000_0100_0000_01B3
        }
        for i in (words * 8)..<b.count { h = (h ^ UInt64(b[i])) &* 0x0000_0100_0000_01B3 }
        return h ^ UInt64(b.count)
    }
}

@inline(__always)
private func memcmpEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    a.count == b.count && (a.count == 0 || a.elementsEqual(b))
}
