#if canImport(Glibc)
import Glibc
#endif

/// A sequence whose elements are made on a thread of its own, in batches,
/// while the caller's thread works on the ones before: a fixes file is parsed
/// (CSV fields, numbers) on one core while judgement validates and stages the
/// rows already read on the other. Elements come in the order `produce` made
/// them; `produce` returns nil at the end.
///
/// The caller may stop early (an error while staging): dropping the iterator
/// stops the thread and waits for it, so nothing reads the file after the
/// caller has returned. With no thread to be had, `produce` runs on the
/// caller's thread, one element at a time.
public final class ReadAhead<Element>: Sequence, IteratorProtocol {
    private let handoff = Handoff<[Element]>(capacity: 16)
    private var thread: pthread_t?
    private var inline: (() -> Element?)?
    private var batch: [Element] = []
    private var at = 0

    public init(batchSize: Int = 4096, _ produce: @escaping () -> Element?) {
        let handoff = self.handoff
        thread = Parallel.spawn {
            defer { handoff.finish() }
            var batch: [Element] = []
            batch.reserveCapacity(batchSize)
            while let e = produce() {
                batch.append(e)
                if batch.count == batchSize {
                    guard handoff.put(batch) else { return }
                    batch.removeAll(keepingCapacity: true)
                }
            }
            _ = handoff.put(batch)
        }
        if thread == nil { inline = produce }
    }

    deinit {
        handoff.cancel()
        if let thread { Parallel.join(thread) }
    }

    public func next() -> Element? {
        if let inline { return inline() }
        while at == batch.count {
            guard let b = handoff.take() else { return nil }
            batch = b
            at = 0
        }
        defer { at += 1 }
        return batch[at]
    }
}
