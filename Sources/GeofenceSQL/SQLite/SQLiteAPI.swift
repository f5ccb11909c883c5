import CSQLite

/// The routines table of the SQLite that hosts this code.
///
/// A loadable extension must call SQLite only through the table its entry
/// point receives: the host (the sqlite3 shell, Python, apsw) may carry its own
/// SQLite, and calling a second copy directly corrupts state. The CLI and the
/// tests get the same table through sqlite3_auto_extension, so every host runs
/// one code path. Set once, before any connection is used.
nonisolated(unsafe) public internal(set) var sqlite: UnsafePointer<sqlite3_api_routines>!

public let SQLITE_TRANSIENT_DESTRUCTOR = csqlite_transient()

/// A copy of `text` in SQLite's own memory, for the places where SQLite frees
/// a message with sqlite3_free (a vtab's zErrMsg, an entry point's error).
func sqliteOwnedString(_ text: String) -> UnsafeMutablePointer<CChar>? {
    let n = text.utf8.count + 1
    guard let m = sqlite.pointee.malloc64!(UInt64(n)) else { return nil }
    text.withCString { m.copyMemory(from: $0, byteCount: n) }
    return m.assumingMemoryBound(to: CChar.self)
}
