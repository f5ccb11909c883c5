/// A min-priority queue of items by a Double bound (a binary heap): the
/// nearest-first search's frontier. Items of equal bound come out in no
/// promised order; NaN bounds must not be pushed.
struct BoundQueue<Item> {
    private var heap: [(bound: Double, item: Item)] = []

    /// The smallest bound, or +infinity when empty.
    var minBound: Double { heap.first?.bound ?? .infinity }

    mutating func push(_ bound: Double, _ item: Item) {
        heap.append((bound, item))
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].bound < heap[parent].bound else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    /// Removes and returns the item of the smallest bound.
    mutating func pop() -> (bound: Double, item: Item)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < heap.count, heap[l].bound < heap[m].bound { m = l }
            if r < heap.count, heap[r].bound < heap[m].bound { m = r }
            if m == i { break }
            heap.swapAt(i, m)
            i = m
        }
        return top
    }
}
