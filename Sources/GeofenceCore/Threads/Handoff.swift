#if canImport(Glibc)
import Glibc
#endif

/// Hands items from one producer thread to one consumer, at most `capacity`
/// waiting, so a producer that runs ahead waits instead of filling memory.
/// Either side may stop early: `cancel()` wakes and releases the producer,
/// `finish()` tells the consumer nothing more comes.
public final class Handoff<Item>: @unchecked Sendable {
    private var items: [Item] = []
    private var head = 0
    private var finished = false, cancelled = false
    private var capacity: Int
    private let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init(capacity: Int) {
        self.capacity = capacity
        pthread_mutex_init(m, nil)
        pthread_cond_init(changed, nil)
    }
    deinit {
        pthread_cond_destroy(changed); pthread_mutex_destroy(m)
        changed.deallocate(); m.deallocate()
    }

    /// Waits for room; false if the consumer has cancelled (stop producing).
    public func put(_ item: Item) -> Bool {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        while items.count - head >= capacity && !cancelled { pthread_cond_wait(changed, m) }
        if cancelled { return false }
        items.append(item)
        pthread_cond_broadcast(changed)
        return true
    }

    /// Waits for the next item; nil once the producer has finished and all are taken.
    public func take() -> Item? {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        while head == items.count && !finished { pthread_cond_wait(changed, m) }
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head >= capacity { items.removeFirst(head); head = 0 }  // taken items are not kept alive
        pthread_cond_broadcast(changed)
        return item
    }

    public func finish() { pthread_mutex_lock(m); finished = true; pthread_cond_broadcast(changed); pthread_mutex_unlock(m) }
    /// For a producer that must run to the end before anyone takes (no thread to run it on).
    public func removeLimit() { pthread_mutex_lock(m); capacity = Int.max; pthread_mutex_unlock(m) }
    public func cancel() { pthread_mutex_lock(m); cancelled = true; pthread_cond_broadcast(changed); pthread_mutex_unlock(m) }
}
