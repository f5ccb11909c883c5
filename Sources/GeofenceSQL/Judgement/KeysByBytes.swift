#if canImport(Glibc)
import Glibc
#endif

/// Integer keys found for ids, looked up by the ids' UTF-8 bytes, as
/// SQLite tells text apart (Swift's `==` takes "é" and "e\u{301}" for one
/// string; here they are two ids).
///
///     var known = KeysByBytes()
///     known["F0009219"] = 17
///     known["F0009219"]      // 17
///     known.removeAll()
///
/// How it works: open addressing over a power-of-two table of slots, each
/// slot the position of an entry; an entry keeps its id, the id's hash
/// (FNV-1a over the bytes from a per-process random start, then mixed)
/// and its key. A lookup hashes the bytes once and
/// compares bytes (memcmp) only with entries of the same hash. It stands
/// where a `[String: Int64]` stood on a run's writing thread, the run's
/// critical path: Swift's hashing of a String (seeded SipHash, through
/// the String's Unicode view) cost that thread more than a tenth of its
/// time beside SQLite's inserts.
struct KeysByBytes {
    private var slots: [Int32] = []
    private var entries: [(id: String, hash: UInt64, key: Int64)] = []

    /// The key found for `id`'s bytes; nil when none was.
    subscript(id: String) -> Int64? {
        get {
            guard !slots.isEmpty else { return nil }
            var id = id
            return id.withUTF8 { bytes in
                let h = Self.hash(bytes)
                var i = Int(truncatingIfNeeded: h) & (slots.count - 1)
                while slots[i] >= 0 {
                    let e = entries[Int(slots[i])]
                    if e.hash == h && Self.same(e.id, bytes) { return e.key }
                    i = (i + 1) & (slots.count - 1)
                }
                return nil
            }
        }
        set {
            guard let newValue else { return }
            if (entries.count + 1) * 2 > slots.count { grow() }
            var id = id
            let h = id.withUTF8 { Self.hash($0) }
            var i = Int(truncatingIfNeeded: h) & (slots.count - 1)
            while slots[i] >= 0 {
                if entries[Int(slots[i])].hash == h && id.withUTF8({ Self.same(entries[Int(slots[i])].id, $0) }) {
                    entries[Int(slots[i])].key = newValue
                    return
                }
                i = (i + 1) & (slots.count - 1)
            }
            slots[i] = Int32(entries.count)
            entries.append((id, h, newValue))
        }
    }

    /// How many ids have a key here.
    var count: Int { entries.count }

    /// Forgets every id, keeping the room they took.
    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        for i in slots.indices { slots[i] = -1 }
    }

    /// Twice the slots (at least 64), every entry placed again: at most half are used.
    private mutating func grow() {
        slots = [Int32](repeating: -1, count: max(64, slots.count * 2))
        for (k, e) in entries.enumerated() {
            var i = Int(truncatingIfNeeded: e.hash) & (slots.count - 1)
            while slots[i] >= 0 { i = (i + 1) & (slots.count - 1) }
            slots[i] = Int32(k)
        }
    }

    /// FNV-1a over the bytes, started from a value drawn once per process
    /// and mixed at the end (ids are short; FNV is a few cycles a byte).
    /// The ids are the user's (a feed's subject_ids): a start no file can
    /// know keeps a file from being made of ids that all land in one slot.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = start
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        h ^= h >> 33
        h &*= 0xff51_afd7_ed55_8ccd
        return h ^ (h >> 33)
    }

    private static let start = UInt64.random(in: .min ... .max)

    /// Whether `a` and `b` have the same UTF-8 bytes.
    static func same(_ a: String, _ b: String) -> Bool {
        var b = b
        return b.withUTF8 { same(a, $0) }
    }

    /// Whether `stored`'s UTF-8 bytes are `bytes`.
    private static func same(_ stored: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var stored = stored
        return stored.withUTF8 { s in
            s.count == bytes.count && (s.count == 0 || memcmp(s.baseAddress!, bytes.baseAddress!, s.count) == 0)
        }
    }
}
