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
    /// What the queue and its helping thread share; the thread holds it
    /// strongly, so it outlives the queue when the maker fails.
    private final class Shared: @unchecked Sendable {
        let signal = Signal()
        var items: [Item] = []
        var closed = false
        let work: (Item) -> Void
        init(_ work: @escaping (Item) -> Void) { self.work = work }

        /// Takes and does items until none is left and none will come.
        func drain() {
            while let item = signal.wait(until: { !items.isEmpty || closed }, then: { items.popLast() }) {
                work(item)
            }
        }
    }

    private let shared: Shared
    private var helper: pthread_t?

    public init(_ work: @escaping (Item) -> Void) {
        let shared = Shared(work)
        self.shared = shared
        helper = Parallel.spawn { shared.drain() }
    }

    deinit {
        shared.signal.change { shared.items.removeAll(); shared.closed = true }
        if let helper { Parallel.join(helper) }
    }

    public func add(_ item: Item) { shared.signal.change { shared.items.append(item) } }

    public func finish() {
        shared.signal.change { shared.closed = true }
        shared.drain()
        if let helper { Parallel.join(helper); self.helper = nil }
    }
}
