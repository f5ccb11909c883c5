#if canImport(Glibc)
import Glibc
#endif

/// The threads of the engine, and the rules every use of them keeps.
///
///     Parallel.run(n) { k in … }                    // n threads, the caller one of them
///     Parallel.share(order, width: w) { w, i in … } // items taken as threads free up
///     try Parallel.share(order, width: w, consumingInOrder: { i in write(i) }) { w, i in judge(i) }
///
/// The contract:
/// - Plain pthreads, so the extension needs no Dispatch or Foundation
///   library at run time (it must load in a bare sqlite3 shell).
/// - One SQLite connection is used by one thread at a time: the calling
///   thread, or a worker holding the lock that guards the connection
///   (`SQLCatalog.lock`). Workers never write to the database.
/// - Workers read shared data that no one changes while they run (the
///   catalog's grid and prepared areas, the fixes) and write only their own
///   items' slots of a result buffer (`SharedBuffers.swift`); the calling
///   thread reads a slot only once its item is marked done.
/// - A worker's error is kept in its item's result and thrown on the calling
///   thread, which stops handing out items and waits for every thread before
///   it returns: no thread outlives the call that started it.
/// - How many: `Parallel.width`, the CPUs this process may use
///   (`UsableCPUs`: affinity and cgroup quota) or `geofence judge --threads`.
/// - With `consumingInOrder`, the calling thread's work (SQLite's writes) is
///   the critical path: the judging threads run at a lower priority, so
///   when both want the same cores the writes go first.
public enum Parallel {
    /// How many threads judgement, location and preparation use: `threads`
    /// when set (`geofence judge --threads`), else the CPUs this process may
    /// use (`UsableCPUs`), at most 8.
    public static var width: Int { threads.map { max(1, $0) } ?? usable }
    private static let usable = min(8, UsableCPUs.count)

    /// Set once by a command before its work starts; nil: `UsableCPUs`.
    nonisolated(unsafe) public static var threads: Int?

    private final class Job: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body(0)` … `body(n - 1)` on n threads (the caller's being one) and
    /// waits for all. A thread that cannot be made has its share run by the caller.
    public static func run(_ n: Int, _ body: @escaping (Int) -> Void) {
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
    public static func share(_ order: [Int], width: Int, _ body: @escaping (_ worker: Int, _ item: Int) -> Void) {
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
    public static func spawn(_ body: @escaping () -> Void) -> pthread_t? {
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

    public static func join(_ t: pthread_t) { pthread_join(t, nil) }
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
    public static func share(_ order: [Int], width: Int, consumingInOrder consume: (Int) throws -> Void,
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
