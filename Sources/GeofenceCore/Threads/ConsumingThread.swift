#if canImport(Glibc)
import Glibc
#endif

/// Consumes items on a thread of its own, in the order they are given, while
/// the caller makes the next ones: `locate --fixes` formats and writes one
/// chunk's pairs while its threads locate the next chunk, and prepares the
/// areas of rows already read while SQLite reads the next rows.
///
/// Contract: `give` hands one item over, waiting while `capacity` items are
/// already waiting; `finish` waits until every item given is consumed. The
/// first error `consume` throws stops the thread (later items are dropped)
/// and is rethrown by the next `give`, by `finish` or by `check`. Dropping
/// the thread without `finish` (the caller failed) lets it consume what was
/// given, as a caller consuming each item in turn would have, and waits for
/// it: nothing is consumed after the caller has returned. With no thread to
/// be had, `give` consumes on the caller's thread.
public final class ConsumingThread<Item> {
    private let handoff: Handoff<Item>
    private let failure = FailureBox()
    private var thread: pthread_t?
    private var consume: ((Item) throws -> Void)?

    public init(capacity: Int = 2, _ consume: @escaping (Item) throws -> Void) {
        let handoff = Handoff<Item>(capacity: capacity), failure = self.failure
        self.handoff = handoff
        thread = Parallel.spawn {
            while let item = handoff.take() {
                do { try consume(item) } catch {
                    failure.set(error)
                    handoff.cancel()
                    return
                }
            }
        }
        if thread == nil { self.consume = consume }
    }

    deinit {
        handoff.finish()
        if let thread { Parallel.join(thread) }
    }

    public func give(_ item: Item) throws {
        if let consume { return try consume(item) }
        if !handoff.put(item) { try check() }
    }

    public func finish() throws {
        handoff.finish()
        if let thread { Parallel.join(thread); self.thread = nil }
        try check()
    }

    /// Throws the error the consuming stopped at, if it has: a caller can
    /// stop making items as soon as they can no longer be consumed.
    public func check() throws {
        if let error = failure.get() { throw error }
    }

    /// The first error the consuming thread met, under a `Lock`.
    private final class FailureBox: @unchecked Sendable {
        private var error: Error?
        private let lock = Lock()
        func set(_ e: Error) { lock.with { if error == nil { error = e } } }
        func get() -> Error? { lock.with { error } }
    }
}
