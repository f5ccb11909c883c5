#if canImport(Glibc)
import Glibc
#endif

/// Work one thread makes while another already does it, the maker joining
/// in once it has made all: `locate --fixes` reads areas' rows from SQLite
/// (one thread) while a second thread prepares the rows already read, then
/// both prepare what is left.
///
/// Contract: `work` runs once for every item `add`ed, on the helping thread
/// or on the caller's, in no set order; `finish` returns once every item is
/// done (the caller working through what is left, then waiting for the
/// helper's last item). `work` must not throw (keep a failure in the item's
/// result). With no thread to be had, `finish` does all the work. Dropping
/// the queue without `finish` (the maker failed) stops the helper after its
/// item and waits for it.
public final class WorkQueue<Item>: @unchecked Sendable {
    private let signal = Signal()
    private var items: [Item] = []
    private var closed = false
    private var helper: pthread_t?
    private let work: (Item) -> Void

    public init(_ work: @escaping (Item) -> Void) {
        self.work = work
        helper = Parallel.spawn { [unowned self] in self.drain() }
    }

    deinit {
        signal.change { items.removeAll(); closed = true }
        if let helper { Parallel.join(helper) }
    }

    public func add(_ item: Item) { signal.change { items.append(item) } }

    public func finish() {
        signal.change { closed = true }
        drain()
        if let helper { Parallel.join(helper); self.helper = nil }
    }

    /// Takes and does items until none is left and none will come.
    private func drain() {
        while let item = signal.wait(until: { !items.isEmpty || closed }, then: { items.popLast() }) {
            work(item)
        }
    }
}
