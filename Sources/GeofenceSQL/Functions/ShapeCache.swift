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
    /// One cached geometry: its bytes (owned) and prepared shape, chained on hash collisions.
    final class Entry {
        let bytes: UnsafeMutableRawBufferPointer
        let shape: PreparedShape
        var next: Entry?
        init(_ source: UnsafeRawBufferPointer, _ shape: PreparedShape, next: Entry?) {
            bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(source.count, 1), alignment: 8)
            if source.count > 0 { bytes.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: source.count) }
            self.shape = shape; self.next = next
            count = source.count
        }
        let count: Int
        deinit { bytes.deallocate() }
        @inline(__always) func matches(_ b: UnsafeRawBufferPointer) -> Bool {
            count == b.count && (count == 0 || memcmp(bytes.baseAddress!, b.baseAddress!, count) == 0)
        }
    }

    private var table: [UInt64: Entry] = [:]
    /// The last hit: consecutive rows of one area (a join grouped by area) skip even the hash.
    private var last: Entry?
    private var count = 0
    private let capacity: Int

    init(capacity: Int = 20_000) { self.capacity = capacity }

    func shape(for bytes: UnsafeRawBufferPointer, parse: () throws -> Shape) rethrows -> PreparedShape {
        if let e = last, e.matches(bytes) { return e.shape }
        let h = Self.hash(bytes)
        var e = table[h]
        while let x = e {
            if x.matches(bytes) { last = x; return x.shape }
            e = x.next
        }
        let prepared = PreparedShape(try parse())
        if count >= capacity { table.removeAll(keepingCapacity: true); count = 0; last = nil }
        let entry = Entry(bytes, prepared, next: table[h])
        table[h] = entry
        last = entry
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
