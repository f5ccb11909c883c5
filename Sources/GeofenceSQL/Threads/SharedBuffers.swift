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
