#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CArrow

/// Record batches made for the caller through the Arrow C Data Interface:
/// columns of strings, float64 and int64 without nulls, gathered here and
/// then moved into an `ArrowArray` and `ArrowSchema` the caller owns.
///
///     var b = ArrowBuilder()
///     b.add("subject_id", texts: ids); b.add("lat", numbers: lats)
///     b.export(into: outArray, outSchema)    // the caller releases both
///
/// Memory: every buffer, child struct and name is allocated with malloc and
/// listed in the struct's `private_data` (an `Allocations`); its release
/// callback releases the children, frees the list and marks the struct
/// released, as the interface asks. Strings use 32-bit offsets (Arrow
/// "utf8"), so a column holds at most 2 GiB of text; `add` refuses more.
struct ArrowBuilder {
    private enum Column {
        case texts(String, [String])
        case numbers(String, [Double])
        case integers(String, [Int64])
    }
    private var columns: [Column] = []
    private var rows: Int?

    struct TooLarge: Error, CustomStringConvertible { var description: String }

    mutating func add(_ name: String, texts: [String]) throws {
        try count(texts.count)
        let bytes = texts.reduce(0) { $0 + $1.utf8.count }
        guard bytes < Int(Int32.max) else {
            throw TooLarge(description: "the output column \(name) would hold \(bytes) bytes of text, more than Arrow's utf8 holds: judge fewer fixes a batch")
        }
        columns.append(.texts(name, texts))
    }
    mutating func add(_ name: String, numbers: [Double]) throws { try count(numbers.count); columns.append(.numbers(name, numbers)) }
    mutating func add(_ name: String, integers: [Int64]) throws { try count(integers.count); columns.append(.integers(name, integers)) }

    private mutating func count(_ n: Int) throws {
        precondition(rows == nil || rows == n, "every column of a batch has as many rows")
        rows = n
    }

    /// Fills `array` and `schema` (whose previous contents are overwritten,
    /// not released) with a struct array of the columns added.
    func export(into array: UnsafeMutablePointer<ArrowArray>, _ schema: UnsafeMutablePointer<ArrowSchema>) {
        let n = Int64(rows ?? 0)
        let childArrays = Allocations.structs(ArrowArray.self, count: columns.count)
        let childSchemas = Allocations.structs(ArrowSchema.self, count: columns.count)
        for (i, column) in columns.enumerated() {
            switch column {
            case .texts(let name, let values): Self.fill(childArrays + i, childSchemas + i, name, texts: values)
            case .numbers(let name, let values): Self.fill(childArrays + i, childSchemas + i, name, format: "g", values)
            case .integers(let name, let values): Self.fill(childArrays + i, childSchemas + i, name, format: "l", values)
            }
        }
        let own = Allocations()
        let arrayChildren = own.pointers(childArrays, count: columns.count)
        let buffers = own.buffers([nil])
        array.pointee = ArrowArray(length: n, null_count: 0, offset: 0, n_buffers: 1, n_children: Int64(columns.count),
                                   buffers: buffers, children: arrayChildren, dictionary: nil, release: releaseArray,
                                   private_data: own.retained())
        let sOwn = Allocations()
        sOwn.keep(childSchemas)
        schema.pointee = ArrowSchema(format: sOwn.text("+s"), name: sOwn.text(""), metadata: nil, flags: 0,
                                     n_children: Int64(columns.count), children: sOwn.pointers(childSchemas, count: columns.count), dictionary: nil,
                                     release: releaseSchema, private_data: sOwn.retained())
        own.keep(childArrays)
    }

    private static func fill(_ a: UnsafeMutablePointer<ArrowArray>, _ s: UnsafeMutablePointer<ArrowSchema>, _ name: String, texts: [String]) {
        let own = Allocations()
        let offsets = own.raw(4 * (texts.count + 1)).assumingMemoryBound(to: Int32.self)
        let total = texts.reduce(0) { $0 + $1.utf8.count }
        let data = own.raw(max(total, 1)).assumingMemoryBound(to: UInt8.self)
        var at = 0
        offsets[0] = 0
        for (i, t) in texts.enumerated() {
            var t = t
            t.withUTF8 { u in if u.count > 0 { (data + at).update(from: u.baseAddress!, count: u.count) }; at += u.count }
            offsets[i + 1] = Int32(at)
        }
        finish(a, s, own, name: name, format: "u", rows: texts.count, buffers: [nil, UnsafeRawPointer(offsets), UnsafeRawPointer(data)])
    }

    private static func fill<T>(_ a: UnsafeMutablePointer<ArrowArray>, _ s: UnsafeMutablePointer<ArrowSchema>, _ name: String,
                                format: String, _ values: [T]) {
        let own = Allocations()
        let data = own.raw(max(values.count * MemoryLayout<T>.stride, 8))
        values.withUnsafeBytes { if $0.count > 0 { data.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
        finish(a, s, own, name: name, format: format, rows: values.count, buffers: [nil, UnsafeRawPointer(data)])
    }

    private static func finish(_ a: UnsafeMutablePointer<ArrowArray>, _ s: UnsafeMutablePointer<ArrowSchema>, _ own: Allocations,
                               name: String, format: String, rows: Int, buffers: [UnsafeRawPointer?]) {
        a.pointee = ArrowArray(length: Int64(rows), null_count: 0, offset: 0, n_buffers: Int64(buffers.count), n_children: 0,
                               buffers: own.buffers(buffers), children: nil, dictionary: nil, release: releaseArray,
                               private_data: own.retained())
        let sOwn = Allocations()
        s.pointee = ArrowSchema(format: sOwn.text(format), name: sOwn.text(name), metadata: nil, flags: 0, n_children: 0,
                                children: nil, dictionary: nil, release: releaseSchema, private_data: sOwn.retained())
    }
}

/// What one exported struct allocated, freed by its release callback.
final class Allocations {
    private var blocks: [UnsafeMutableRawPointer] = []

    /// `n` bytes of malloc'd memory, freed with the struct.
    func raw(_ n: Int) -> UnsafeMutableRawPointer {
        let p = malloc(max(n, 1))!
        blocks.append(p)
        return p
    }
    func keep(_ p: UnsafeMutableRawPointer) { blocks.append(p) }
    func keep<T>(_ p: UnsafeMutablePointer<T>) { blocks.append(UnsafeMutableRawPointer(p)) }
    /// A NUL-terminated copy of `s`.
    func text(_ s: String) -> UnsafePointer<CChar> {
        let p = strdup(s)!
        blocks.append(UnsafeMutableRawPointer(p))
        return UnsafePointer(p)
    }
    /// The buffers array of a struct.
    func buffers(_ list: [UnsafeRawPointer?]) -> UnsafeMutablePointer<UnsafeRawPointer?> {
        let p = raw(MemoryLayout<UnsafeRawPointer?>.stride * list.count).bindMemory(to: UnsafeRawPointer?.self, capacity: list.count)
        for (i, b) in list.enumerated() { p[i] = b }
        return p
    }
    /// An array of pointers to each of `count` consecutive structs at `base`.
    func pointers<T>(_ base: UnsafeMutablePointer<T>, count: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<T>?> {
        let p = raw(MemoryLayout<UnsafeMutablePointer<T>?>.stride * max(count, 1)).bindMemory(to: UnsafeMutablePointer<T>?.self, capacity: max(count, 1))
        for i in 0..<count { p[i] = base + i }
        return p
    }

    /// `count` zeroed structs in one block (the children of a struct
    /// array), kept by the parent's `Allocations`.
    static func structs<T>(_: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        calloc(max(count, 1), MemoryLayout<T>.stride)!.bindMemory(to: T.self, capacity: max(count, 1))
    }

    func retained() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

    deinit { for b in blocks { free(b) } }
}

/// An exported array's release: its children first (those not moved away), then its own memory.
private let releaseArray: @convention(c) (UnsafeMutablePointer<ArrowArray>?) -> Void = { a in
    guard let a, a.pointee.release != nil else { return }
    for i in 0..<Int(a.pointee.n_children) { carrow_release_array(a.pointee.children[i]) }
    if let own = a.pointee.private_data { Unmanaged<Allocations>.fromOpaque(own).release() }
    a.pointee.release = nil
}

/// An exported schema's release: its children first, then its own memory.
private let releaseSchema: @convention(c) (UnsafeMutablePointer<ArrowSchema>?) -> Void = { s in
    guard let s, s.pointee.release != nil else { return }
    for i in 0..<Int(s.pointee.n_children) { carrow_release_schema(s.pointee.children[i]) }
    if let own = s.pointee.private_data { Unmanaged<Allocations>.fromOpaque(own).release() }
    s.pointee.release = nil
}
