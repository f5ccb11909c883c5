import GeofenceCore
#if canImport(Glibc)
import Glibc
#endif

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

    /// FNV-1a over the length, the first 64 bytes (header and bounding box,
    /// which already tell most areas apart) and the last 64 (the final
    /// coordinates). Hits are verified byte for byte, so the hash need only spread.
    static func hash(_ b: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(b.count)
        @inline(__always) func mix(_ offset: Int) {
            h = (h ^ b.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x0000_0100_0000_01B3
        }
        if b.count < 8 {
            for i in 0..<b.count { h = (h ^ UInt64(b[i])) &* 0x0000_0100_0000_01B3 }
            return h
        }
        var o = 0
        while o + 8 <= min(b.count, 64) { mix(o); o += 8 }
        var tail = max(o, b.count - 64)
        while tail + 8 <= b.count { mix(tail); tail += 8 }
        mix(b.count - 8)
        return h
    }
}

@inline(__always)
private func memcmpEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
}
