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
public struct StayMap: Equatable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// The area_ids, ascending.
    public private(set) var keys: [String] = []
    private var values: [StayState] = []
    /// Per key, its place among a catalog's areas numbered in area_id order
    /// (`CandidateGrid.orderKey`), or -1 not known yet: a merge with
    /// candidates that come as grid indices then compares integers, not
    /// strings. Not part of the map's value: `==` ignores it.
    public private(set) var orderKeys: [Int] = []

    public static func == (a: StayMap, b: StayMap) -> Bool { a.keys == b.keys && a.values == b.values }

    public init() {}

    public init(dictionaryLiteral elements: (String, StayState)...) {
        for (k, v) in elements { self[k] = v }
    }

    public var isEmpty: Bool { keys.isEmpty }
    public var count: Int { keys.count }

    /// Where `id` is, or where it would go.
    private func slot(of id: String) -> (index: Int, found: Bool) {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] < id { lo = mid + 1 } else { hi = mid }
        }
        return (lo, lo < keys.count && keys[lo] == id)
    }

    /// The stay in area `id`; setting nil removes it.
    public subscript(id: String) -> StayState? {
        get {
            let s = slot(of: id)
            return s.found ? values[s.index] : nil
        }
        set {
            let s = slot(of: id)
            switch (s.found, newValue) {
            case (true, let v?): values[s.index] = v
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
        get { values[i] }
        _modify { yield &values[i] }
    }

    public mutating func insert(_ id: String, _ stay: StayState, at i: Int, orderKey: Int = -1) {
        keys.insert(id, at: i)
        values.insert(stay, at: i)
        orderKeys.insert(orderKey, at: i)
    }

    public mutating func remove(at i: Int) {
        keys.remove(at: i)
        values.remove(at: i)
        orderKeys.remove(at: i)
    }

    /// Sets every order key not known yet, by `key(area_id)`.
    public mutating func fillOrderKeys(_ key: (String) -> Int) {
        for i in orderKeys.indices where orderKeys[i] < 0 { orderKeys[i] = key(keys[i]) }
    }

    public func makeIterator() -> Zip2Sequence<[String], [StayState]>.Iterator {
        zip(keys, values).makeIterator()
    }
}
