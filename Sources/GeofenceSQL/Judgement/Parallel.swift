#if canImport(Glibc)
import Glibc
#endif

/// Plain pthreads, so the extension needs no Dispatch or Foundation library
/// at run time (it must load in a bare sqlite3 shell).
enum Parallel {
    /// How many threads judgement uses: the online cores, at most 8.
    static var width: Int { max(1, min(8, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))) }

    private final class Job: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body(0)` … `body(n - 1)` on n threads (the caller's being one) and waits for all.
    static func run(_ n: Int, _ body: @escaping (Int) -> Void) {
        guard n > 1 else { if n == 1 { body(0) }; return }
        var threads: [pthread_t] = []
        for k in 1..<n {
            let job = Unmanaged.passRetained(Job { body(k) }).toOpaque()
            var t = pthread_t()
            let rc = pthread_create(&t, nil, { raw in
                let job = Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue()
                job.body()
                return nil
            }, job)
            if rc == 0 { threads.append(t) } else { Unmanaged<Job>.fromOpaque(job).takeRetainedValue().body() }
        }
        body(0)
        for t in threads { pthread_join(t, nil) }
    }
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

/// Lets threads that write disjoint indices share one buffer.
struct UnsafeMutableBufferPointerBox<T>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<T>
    init(_ b: UnsafeMutableBufferPointer<T>) { buffer = b }
}
