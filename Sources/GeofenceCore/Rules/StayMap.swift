/// A subject's stays by area_id, kept sorted by area_id.
///
/// Why not a Dictionary: judgement merges the stays with a fix's candidate
/// areas, which come in area_id order, at every fix. A dictionary had to sort
/// its keys for that merge and hash an area_id to read or write a stay; a
/// subject holds a handful of stays, so two small sorted arrays do both with
/// no hashing and no sorting, at every fix.
///
/// Keys compare as Swift strings (`<`, `==`), as the candidate merge does.
///
/// Entries small, stays aside: in a busy city stays change several times
/// per fix, and each insert or removal shifts the entries after it. So an
/// entry is 32 bytes and names its stay's place in `stays`, which never
/// shifts (a removed stay's place is reused).
public struct StayMap: Equatable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Entry: Sendable {
        public fileprivate(set) var key: String
        /// Its place among a catalog's areas numbered in area_id order
        /// (`CandidateGrid.orderKey`), or -1 not known yet: a merge with
        /// candidates that come as grid indices then compares integers, not
        /// strings. Not part of the map's value: `==` ignores it.
        public fileprivate(set) var orderKey: Int
        fileprivate var place: Int
    }
    private var entries: [Entry] = []
    private var stays: [StayState] = []
    private var freePlaces: [Int] = []

    public static func == (a: StayMap, b: StayMap) -> Bool {
        a.entries.count == b.entries.count
            && zip(a.entries, b.entries).allSatisfy { $0.key == $1.key && a.stays[$0.place] == b.stays[$1.place] }
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
            if entries[mid].key.utf8Precedes(id) { lo = mid + 1 } else { hi = mid }
        }
        return (lo, lo < entries.count && entries[lo].key.hasSameUTF8(as: id))
    }

    /// The stay in area `id`; setting nil removes it.
    public subscript(id: String) -> StayState? {
        get {
            let s = slot(of: id)
            return s.found ? stays[entries[s.index].place] : nil
        }
        set {
            let s = slot(of: id)
            switch (s.found, newValue) {
            case (true, let v?): stays[entries[s.index].place] = v
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
        get { stays[entries[i].place] }
        _modify { yield &stays[entries[i].place] }
    }

    public mutating func insert(_ id: String, _ stay: StayState, at i: Int, orderKey: Int = -1) {
        let place: Int
        if let p = freePlaces.popLast() {
            place = p
            stays[p] = stay
        } else {
            place = stays.count
            stays.append(stay)
        }
        entries.insert(Entry(key: id, orderKey: orderKey, place: place), at: i)
    }

    public mutating func remove(at i: Int) {
        let place = entries.remove(at: i).place
        stays[place] = StayState()  // lets go of its DWELL list now
        freePlaces.append(place)
    }

    /// Sets every order key not known yet, by `key(area_id)`.
    public mutating func fillOrderKeys(_ key: (String) -> Int) {
        for i in entries.indices where entries[i].orderKey < 0 { entries[i].orderKey = key(entries[i].key) }
    }

    public func makeIterator() -> LazyMapSequence<[Entry], (String, StayState)>.Iterator {
        let stays = self.stays
        return entries.lazy.map { ($0.key, stays[$0.place]) }.makeIterator()
    }
}
