#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex at a fixed address.
public final class Lock: @unchecked Sendable {
    @usableFromInline let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    public init() { pthread_mutex_init(m, nil) }
    deinit { pthread_mutex_destroy(m); m.deallocate() }
    @inlinable public func with<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        return try body()
    }
}

/// A mutex with a condition variable at fixed addresses: for a thread that
/// waits until others have done something.
public final class Signal: @unchecked Sendable {
    private let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let c = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    public init() { pthread_mutex_init(m, nil); pthread_cond_init(c, nil) }
    deinit { pthread_cond_destroy(c); pthread_mutex_destroy(m); c.deallocate(); m.deallocate() }

    /// Runs `body` under the mutex and wakes every waiter.
    public func change<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(m)
        defer { pthread_cond_broadcast(c); pthread_mutex_unlock(m) }
        return try body()
    }

    /// Waits under the mutex until `ready()` holds, then runs `body`.
    public func wait<T>(until ready: () -> Bool, then body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        while !ready() { pthread_cond_wait(c, m) }
        return try body()
    }
}
