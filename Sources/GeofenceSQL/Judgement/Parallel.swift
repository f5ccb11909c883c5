#if canImport(Glibc)
import Glibc
#endif

/// Plain pthreads, so the extension needs no Dispatch or Foundation library
/// at run time (it must load in a bare sqlite3 shell).
public enum Parallel {
    /// How many threads judgement, location and preparation use: `threads`
    /// when set (`geofence judge --threads`), else the CPUs this process may
    /// use (`UsableCPUs`), at most 8.
    static var width: Int { threads.map { max(1, $0) } ?? usable }
    private static let usable = min(8, UsableCPUs.count)

    /// Set once by a command before its work starts; nil: `UsableCPUs`.
    nonisolated(unsafe) public static var threads: Int?

    private final class Job: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body(0)` … `body(n - 1)` on n threads (the caller's being one) and
    /// waits for all. A thread that cannot be made has its share run by the caller.
    static func run(_ n: Int, _ body: @escaping (Int) -> Void) {
        guard n > 1 else { if n == 1 { body(0) }; return }
        var threads: [pthread_t] = []
        for k in 1..<n {
            if let t = spawn({ body(k) }) { threads.append(t) } else { body(k) }
        }
        body(0)
        for t in threads { join(t) }
    }

    /// Runs `body(worker, item)` for every item of `order` on `width` threads,
    /// each taking the next item as it finishes one, so a thread that drew
    /// cheap items is not left idle while another works through dear ones.
    /// Put the dearest items first: the last to finish is then a cheap one.
    static func share(_ order: [Int], width: Int, _ body: @escaping (_ worker: Int, _ item: Int) -> Void) {
        let lock = Lock()
        var next = 0
        run(min(width, order.count)) { w in
            while true {
                let k: Int = lock.with { defer { next += 1 }; return next }
                guard k < order.count else { return }
                body(w, order[k])
            }
        }
    }

    /// Starts `body` on a new thread, to be `join`ed; nil if no thread could
    /// be made, and the caller must then do the work itself.
    static func spawn(_ body: @escaping () -> Void) -> pthread_t? {
        let job = Unmanaged.passRetained(Job(body)).toOpaque()
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { raw in
            let job = Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue()
            job.body()
            return nil
        }, job)
        guard rc == 0 else { Unmanaged<Job>.fromOpaque(job).release(); return nil }
        return t
    }

    static func join(_ t: pthread_t) { pthread_join(t, nil) }
}

/// A pthread mutex at a fixed address.
final class Lock: @unchecked Sendable {
    private let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    init() { pthread_mutex_init(m, nil) }
    deinit { pthread_mutex_destroy(m); m.deallocate() }
    func with<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        return try body()
    }
}

/// Lets threads share a buffer they only read.
struct UnsafeBufferPointerBox<T>: @unchecked Sendable {
    let buffer: UnsafeBufferPointer<T>
    init(_ b: UnsafeBufferPointer<T>) { buffer = b }
}

/// Lets threads that write disjoint indices share one buffer.
struct UnsafeMutableBufferPointerBox<T>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<T>
    init(_ b: UnsafeMutableBufferPointer<T>) { buffer = b }
}

/// Hands items from one producer thread to one consumer, at most `capacity`
/// waiting, so a producer that runs ahead waits instead of filling memory.
/// Either side may stop early: `cancel()` wakes and releases the producer,
/// `finish()` tells the consumer nothing more comes.
final class Handoff<Item>: @unchecked Sendable {
    private var items: [Item] = []
    private var head = 0
    private var finished = false, cancelled = false
    private var capacity: Int
    private let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init(capacity: Int) {
        self.capacity = capacity
        pthread_mutex_init(m, nil)
        pthread_cond_init(changed, nil)
    }
    deinit {
        pthread_cond_destroy(changed); pthread_mutex_destroy(m)
        changed.deallocate(); m.deallocate()
    }

    /// Waits for room; false if the consumer has cancelled (stop producing).
    func put(_ item: Item) -> Bool {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        while items.count - head >= capacity && !cancelled { pthread_cond_wait(changed, m) }
        if cancelled { return false }
        items.append(item)
        pthread_cond_broadcast(changed)
        return true
    }

    /// Waits for the next item; nil once the producer has finished and all are taken.
    func take() -> Item? {
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

    func finish() { pthread_mutex_lock(m); finished = true; pthread_cond_broadcast(changed); pthread_mutex_unlock(m) }
    /// For a producer that must run to the end before anyone takes (no thread to run it on).
    func removeLimit() { pthread_mutex_lock(m); capacity = Int.max; pthread_mutex_unlock(m) }
    func cancel() { pthread_mutex_lock(m); cancelled = true; pthread_cond_broadcast(changed); pthread_mutex_unlock(m) }
}

/// A mutex with a condition variable at fixed addresses: for a thread that
/// waits until others have done something.
final class Signal: @unchecked Sendable {
    private let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let c = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    init() { pthread_mutex_init(m, nil); pthread_cond_init(c, nil) }
    deinit { pthread_cond_destroy(c); pthread_mutex_destroy(m); c.deallocate(); m.deallocate() }

    /// Runs `body` under the mutex and wakes every waiter.
    func change<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(m)
        defer { pthread_cond_broadcast(c); pthread_mutex_unlock(m) }
        return try body()
    }

    /// Waits under the mutex until `ready()` holds, then runs `body`.
    func wait<T>(until ready: () -> Bool, then body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        while !ready() { pthread_cond_wait(c, m) }
        return try body()
    }
}

extension Parallel {
    /// Runs `body(worker, item)` for every item of `order` on `width` new
    /// threads (each taking the next item as it finishes one) while the
    /// calling thread hands the items to `consume` in the order 0, 1, 2, …,
    /// each as soon as it is done: the caller's work (SQLite's writes) then
    /// overlaps the threads'. `order` must hold each of 0..<order.count once;
    /// put early the items that are needed early or that take longest. If
    /// `consume` throws, the threads take no further item, are waited for,
    /// and the error is rethrown. With no thread to be had, the caller does
    /// all the work first, then consumes.
    static func share(_ order: [Int], width: Int, consumingInOrder consume: (Int) throws -> Void,
                      _ body: @escaping (_ worker: Int, _ item: Int) -> Void) throws {
        let signal = Signal()
        let state = ShareState(count: order.count)
        let work: (Int) -> Void = { w in
            // The calling thread's writes are the run's critical path: when
            // it and the judging threads want the same cores, it goes first.
            // (On Linux a nice value is the thread's own; 0 names this thread.)
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
            setpriority(which, 0, min(19, getpriority(which, 0) + 10))
            while true {
                let k: Int = signal.change { defer { state.next += 1 }; return state.stopped ? order.count : state.next }
                guard k < order.count else { return }
                body(w, order[k])
                signal.change { state.done[order[k]] = true }
            }
        }
        var threads: [pthread_t] = []
        for w in 0..<min(width, order.count) {
            if let t = spawn({ work(w) }) { threads.append(t) }
        }
        if threads.isEmpty { work(0) }
        defer { for t in threads { join(t) } }
        do {
            for i in 0..<order.count {
                signal.wait(until: { state.done[i] }, then: {})
                try consume(i)
            }
        } catch {
            signal.change { state.stopped = true }
            throw error
        }
    }

    private final class ShareState: @unchecked Sendable {
        var next = 0
        var stopped = false
        var done: [Bool]
        init(count: Int) { done = [Bool](repeating: false, count: count) }
    }
}
