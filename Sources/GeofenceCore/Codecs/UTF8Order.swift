#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

extension String {
    /// Whether the two hold the same UTF-8 bytes: SQLite's BINARY collation,
    /// by which ids are told apart, where Swift's `==` takes canonically
    /// equivalent strings ("é" and "e\u{301}") as equal.
    ///
    /// Why not `utf8.elementsEqual`: it walks both views a byte at a time,
    /// and judgement asks this of every fix, twice (staging and chunking);
    /// here it is a length check and a memcmp.
    @inlinable
    public func hasSameUTF8(as other: String) -> Bool {
        if isSameValue(as: other) { return true }
        var a = self, b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in x.count == y.count && (x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0) }
        }
    }

    /// Whether `self` comes before `other` in SQLite's BINARY order: their
    /// UTF-8 bytes compared as unsigned, a prefix first. Area ids are ordered
    /// so wherever judgement, locate or nearest sort or merge them, as
    /// SQLite stores and lists them.
    ///
    /// Why not Swift's `<`: it compares canonical forms, so its order
    /// differs from SQLite's for text not in NFC, and for some such strings
    /// it is not even an ordering ("A\u{30A}" and "\u{C5}x": neither comes
    /// before the other, yet they are not equal), which breaks any merge of
    /// two sorted lists (a subject's stays, as stored, with a fix's
    /// candidates). For NFC text the two orders agree.
    @inlinable
    public func utf8Precedes(_ other: String) -> Bool {
        if isSameValue(as: other) { return false }
        var a = self, b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let n = min(x.count, y.count)
                let c = n == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, n)
                return c < 0 || (c == 0 && x.count < y.count)
            }
        }
    }

    /// Whether the two are one value: the same 16 bytes (a small string's
    /// own bytes, or its length, flags and one storage). Only a shortcut in
    /// front of the byte comparisons: ids compared in a merge are mostly
    /// the same String met twice (a subject's stays and the stays of its
    /// last record, a stay and its candidate), and then no byte is read.
    @inlinable
    func isSameValue(as other: String) -> Bool {
        let a = unsafeBitCast(self, to: (UInt64, UInt64).self), b = unsafeBitCast(other, to: (UInt64, UInt64).self)
        return a.0 == b.0 && a.1 == b.1
    }
}
