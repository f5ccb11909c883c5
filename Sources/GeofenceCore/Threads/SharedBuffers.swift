/// Lets threads share a buffer they only read.
public struct UnsafeBufferPointerBox<T>: @unchecked Sendable {
    public let buffer: UnsafeBufferPointer<T>
    public init(_ b: UnsafeBufferPointer<T>) { buffer = b }
}

/// Lets threads that write disjoint indices share one buffer.
public struct UnsafeMutableBufferPointerBox<T>: @unchecked Sendable {
    public let buffer: UnsafeMutableBufferPointer<T>
    public init(_ b: UnsafeMutableBufferPointer<T>) { buffer = b }
}

/// A value handed to another thread that only one thread uses at a time
/// (a handoff or a join orders the accesses).
public final class Box<T>: @unchecked Sendable {
    public var value: T
    public init(_ value: T) { self.value = value }
}
