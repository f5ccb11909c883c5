#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// SHA-256 (FIPS 180-4), for knowing a file by its content: what a
/// resumable run records of its input (`judge --resume`), so that the same
/// file found again resumes its run or is not judged twice, and a changed
/// one is refused. Fed block by block, so a file of any size is hashed in
/// constant memory.
struct SHA256 {
    private var h: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
    /// Bytes not yet a whole 64-byte block.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// Adds `bytes` to what is hashed.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var i = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending += bytes[0..<take]
            i = take
            guard pending.count == 64 else { return }
            let block = pending
            block.withUnsafeBytes { compress($0, from: 0, to: 64) }
            pending.removeAll(keepingCapacity: true)
        }
        let whole = i + (bytes.count - i) / 64 * 64
        compress(bytes, from: i, to: whole)
        pending += bytes[whole...]
    }

    /// The hash of everything added, in lower-case hex.
    mutating func hex() -> String {
        let bits = length &* 8
        var tail = pending + [0x80]
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        tail.withUnsafeBytes { compress($0, from: 0, to: $0.count) }
        pending.removeAll()
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for word in h {
            for shift in stride(from: 28, through: 0, by: -4) { out.append(digits[Int((word >> UInt32(shift)) & 0xf)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The 64-byte blocks of `data[from..<to]` into the state, through
    /// buffers taken once (an array indexed per word cost a third of the time).
    private mutating func compress(_ data: UnsafeRawBufferPointer, from: Int, to: Int) {
        guard from < to else { return }
        var schedule = [UInt32](repeating: 0, count: 64)
        Self.k.withUnsafeBufferPointer { k in
            schedule.withUnsafeMutableBufferPointer { w in
                h.withUnsafeMutableBufferPointer { h in
                    for at in stride(from: from, to: to, by: 64) { Self.compress(data, at: at, w, k, h) }
                }
            }
        }
    }

    private static func compress(_ block: UnsafeRawBufferPointer, at: Int, _ w: UnsafeMutableBufferPointer<UInt32>,
                                 _ k: UnsafeBufferPointer<UInt32>, _ h: UnsafeMutableBufferPointer<UInt32>) {
        for t in 0..<16 {
            let p = at + 4 * t
            w[t] = UInt32(block[p]) << 24 | UInt32(block[p + 1]) << 16 | UInt32(block[p + 2]) << 8 | UInt32(block[p + 3])
        }
        for t in 16..<64 {
            let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
        for t in 0..<64 {
            let t1 = hh &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[t] &+ w[t]
            let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
            (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e; h[5] &+= f; h[6] &+= g; h[7] &+= hh
    }

    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    /// The SHA-256 and size of what the open descriptor `fd` reads from its
    /// start (read through a duplicate: `fd` stays open, its offset unused).
    static func ofDescriptor(_ fd: Int32) -> (hex: String, size: Int64)? {
        let copy = dup(fd)
        guard copy >= 0 else { return nil }
        guard lseek(copy, 0, SEEK_SET) == 0, let f = fdopen(copy, "rb") else { close(copy); return nil }
        defer { fclose(f) }
        return of(stream: f)
    }

    /// The hash of what `f` reads to its end and its size, read in blocks of
    /// 1 MiB; nil (with errno set) if it cannot be read.
    private static func of(stream f: UnsafeMutablePointer<FILE>) -> (hex: String, size: Int64)? {
        var hash = SHA256()
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var size: Int64 = 0
        while true {
            let n = block.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
            if n > 0 { block.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) } }
            size += Int64(n)
            if n < block.count { break }
        }
        guard ferror(f) == 0 else { return nil }
        return (hash.hex(), size)
    }
}
