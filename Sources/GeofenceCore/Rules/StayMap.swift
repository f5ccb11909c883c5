/// A subject's stays by area_id, kept sorted by area_id.
///
/// Why not a Dictionary: judgement merges the stays with a fix's candidate
/// areas, which come in area_id order, at every fix. A dictionary had to sort
/// its keys for that merge and hash an area_id to read or write a stay; a
/// subject holds a handful of stays, so two small sorted arrays do both with
/// no hashing and no sorting (profiled: the hashing and sorting were ~20 % of
/// the medium benchmark's judging time).
///
/// Keys compare as Swift strings (`<`, `==`), as the candidate merge does.
///
/// One array of entries, not one per field: a subject's stays change at
/// ~4 fixes in 1 on the medium benchmark, and each insert or removal
/// shifted three arrays (a memmove and a uniqueness check each).
public struct StayMap: Equatable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Entry: Sendable {
        public fileprivate(set) var key: String
        public fileprivate(set) var stay: StayState
        /// Its place among a catalog's areas numbered in area_id order
        /// (`CandidateGrid.orderKey`), or -1 not known yet: a merge with
        /// candidates that come as grid indices then compares integers, not
        /// strings. Not part of the map's value: `==` ignores it.
        public fileprivate(set) var orderKey: Int
    }
    private var entries: [Entry] = []

    public static func == (a: StayMap, b: StayMap) -> Bool {
        a.entries.count == b.entries.count && zip(a.entries, b.entries).allSatisfy { $0.key == $1.key && $0.stay == $1.stay }
    }

    public init() {}

    public init(dictionaryLiteral elements: (String, StayState)...) {
        for (k, v) in elements { self[k] = v }
    }

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }

    /// The area_ids, ascending.
    public var keys: [String] { entries.map(\.key) }

    /// The area_id at position `i`.
    @inline(__always)
    public func key(at i: Int) -> String { entries[i].key }

    /// The order key at position `i` (see `Entry.orderKey`).
    @inline(__always)
    public func orderKey(at i: Int) -> Int { entries[i].orderKey }

    /// Every order key, in key order.
    public var orderKeys: [Int] { entries.map(\.orderKey) }

    /// Where `id` is, or where it would go.
    private func slot(of id: String) -> (index: Int, found: Bool) {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].key < id { lo = mid + 1 } else { hi = mid }
        }
        return (lo, lo < entries.count && entries[lo].key == id)
    }

    /// The stay in area `id`; setting nil removes it.
    public subscript(id: String) -> StayState? {
        get {
            let s = slot(of: id)
            return s.found ? entries[s.index].stay : nil
        }
        set {
            let s = slot(of: id)
            switch (s.found, newValue) {
            case (true, let v?): entries[s.index].stay = v
            case (true, nil): remove(at: s.index)
            case (false, let v?): insert(id, v, at: s.index)
            case (false, nil): break
            }
        }
    }

    // Positional access, for a merge that walks the keys in order. The caller
    // keeps the order: it inserts a key only where it belongs.

    /// The stay at position `i` of `keys`.
    public subscript(at i: Int) -> StayState {
        get { entries[i].stay }
        _modify { yield &entries[i].stay }
    }

    public mutating func insert(_ id: String, _ stay: StayState, at i: Int, orderKey: Int = -1) {
        entries.insert(Entry(key: id, stay: stay, orderKey: orderKey), at: i)
    }

    public mutating func remove(at i: Int) {
        entries.remove(at: i)
    }

    /// Sets every order key not known yet, by `key(area_id)`.
    public mutating func fillOrderKeys(_ key: (String) -> Int) {
        for i in entries.indices where entries[i].orderKey < 0 { entries[i].orderKey = key(entries[i].key) }
    }

    public func makeIterator() -> LazyMapSequence<[Entry], (String, StayState)>.Iterator {
        entries.lazy.map { ($0.key, $0.stay) }.makeIterator()
    }
}
