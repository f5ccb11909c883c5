import ArgumentParser
#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import GeofenceCore
import GeofenceHost
import GeofenceSQL

struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a geofence catalog (a SpatiaLite database) in DB.",
        discussion: """
            DB may be new, empty, or an existing SpatiaLite database without a catalog. \
            --page-size 32768 suits a catalog judged in batches (fewer, larger writes for \
            millions of rows); SQLite's 4096 suits one fix per call (each commit writes whole pages).
            """)

    @Argument(help: "The database file.")
    var db: String

    @Option(help: ArgumentHelp(
        "SQLite's page size for a new or empty file, in bytes: a power of two from 512 to 65536 "
            + "(default: SQLite's, 4096). A database that already holds pages keeps its own.",
        valueName: "bytes"))
    var pageSize: Int?

    /// A catalog of an earlier schema version, for tests of the in-place
    /// upgrade: their fixtures fill its tables as that version stored them.
    @Option(help: .hidden)
    var schemaVersion: Int?

    func validate() throws {
        if let v = schemaVersion, v < 1 || v > Schema.currentVersion {
            throw ValidationError("--schema-version \(v): from 1 to \(Schema.currentVersion)")
        }
        if let n = pageSize, n < 512 || n > 65536 || n & (n - 1) != 0 {
            throw ValidationError("--page-size \(n): SQLite's page size is a power of two from 512 to 65536")
        }
    }

    func run() throws {
        try reporting {
            naming(catalog: db)
            try refuseUnwritable()
            // Made here, exclusively, when it is not there: then this init knows the file is its own.
            let fd = open(db, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            let madeHere = fd >= 0
            if madeHere { close(fd) }
            do {
                try create()
            } catch {
                if madeHere { removeIfEmpty() }
                throw error
            }
        }
    }

    /// A failed init of a file it made (a full disk, say) leaves no empty
    /// file behind: it would be "no geofence catalog" to every later
    /// command. Only a file this init made, still empty, with no journal
    /// beside it, goes; another init's file is never touched.
    private func removeIfEmpty() {
        var st = stat()
        guard stat(db, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size == 0 else { return }
        for side in ["-journal", "-wal"] where access(db + side, F_OK) == 0 { return }
        unlink(db + "-shm")
        unlink(db)
    }

    private func create() throws {
        let conn = try Database.open(db, create: true)
        // A new file takes the size of its first page: set while it has none.
        if let n = pageSize, try conn.scalar("PRAGMA page_count").int64 == 0 {
            try conn.execute("PRAGMA page_size = \(n)")
        }
        // Every refusal is decided inside the creating transaction, whose
        // write lock is taken first (`Schema.create`): another init of the
        // same new file waits for it, then finds the catalog; a refused
        // init writes nothing, not even its journal mode.
        do {
            try Schema.create(conn, version: schemaVersion ?? Schema.currentVersion, whileLocked: { try requirePageSize(conn) })
        } catch let e as CatalogError {
            let refusedCatalog = (try? Schema.state(of: conn)).map { $0 != .absent } ?? false
            throw CatalogError("\(db): \(e.message)" + (refusedCatalog ? otherPageSizeHint(conn) : ""))
        }
        // WAL only once the catalog is made: switching writes the file's
        // header, which a refused init must not do.
        let mode = try switchedToWAL(conn)
        guard mode == "wal" else {
            throw CatalogError("\(db): the catalog was created, but SQLite could not put it in WAL mode (journal mode \(mode)): "
                               + "run `sqlite3 \(Echo.shellWord(db)) 'PRAGMA journal_mode = WAL'` when no other process has it open")
        }
        print("created geofence catalog (schema version \(schemaVersion ?? Schema.currentVersion)) in \(db)")
    }

    /// The journal mode after asking for WAL. SQLite takes the write lock
    /// for the switch from inside the statement's own read, where it calls
    /// no busy handler: another init of the same new file, refusing the
    /// catalog this one has just made, holds the lock a moment then. So a
    /// busy switch is tried again, for up to the busy timeout; past it the
    /// catalog stands, and the caller says to switch it by hand.
    private func switchedToWAL(_ conn: Connection) throws -> String {
        for _ in 0..<(Database.busyTimeoutSeconds * 100) {
            do { return try conn.scalar("PRAGMA journal_mode = WAL").string ?? "" } catch let e as SQLiteError where e.isBusy {
                usleep(10_000)
            }
        }
        return (try? conn.scalar("PRAGMA journal_mode"))?.string ?? ""
    }

    /// A file that holds pages keeps their size: asking for another is refused.
    private func requirePageSize(_ conn: Connection) throws {
        guard let n = pageSize, try conn.scalar("PRAGMA page_count").int64 ?? 0 > 0,
              let had = try conn.scalar("PRAGMA page_size").int64, had != Int64(n) else { return }
        throw InputError("\(db) already holds pages of \(had) bytes, and SQLite sets the page size only on an empty file: "
                         + "run init without --page-size (the catalog then has \(had)-byte pages), or rewrite the file first with "
                         + "`sqlite3 \(Echo.shellWord(db)) 'PRAGMA journal_mode = DELETE; PRAGMA page_size = \(n); VACUUM'`")
    }

    /// For a catalog refused with --page-size of another size: how to change its pages.
    private func otherPageSizeHint(_ conn: Connection) -> String {
        guard let n = pageSize, let had = try? conn.scalar("PRAGMA page_size").int64, had != Int64(n) else { return "" }
        // The suggested cache is a count of pages (`SuggestedCache`): set again for the new size.
        return "; its pages are \(had) bytes, and `sqlite3 \(Echo.shellWord(db)) 'PRAGMA journal_mode = DELETE; PRAGMA page_size = \(n); "
            + "VACUUM; PRAGMA journal_mode = WAL; PRAGMA default_cache_size = \(SuggestedCache.pages(Int64(n)))'` rewrites it with \(n)-byte pages"
    }

    /// A file or folder this user cannot write, said before SQLite's "unable to open".
    private func refuseUnwritable() throws {
        var st = stat()
        if stat(db, &st) == 0, st.st_mode & S_IFMT == S_IFDIR {
            throw InputError("\(db) is a directory: name the database file to create, e.g. \(Echo.shellWord(db + "/fences.db"))")
        }
        let folder = ReadOnlyCatalog.folder(of: db)
        if !db.hasPrefix("file:"), access(db, F_OK) != 0, access(folder, W_OK | X_OK) != 0 {
            throw CatalogError("\(db): cannot create the database: its folder \(folder) is missing or not writable by this user")
        }
        if let reason = ReadOnlyCatalog.reason(db) {
            throw CatalogError("\(db): cannot create a catalog in it: \(reason)")
        }
    }
}

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the engine's version.")
    func run() { print("geofence \(GeofenceVersion.string) (catalog schema \(Schema.currentVersion))") }
}
