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

    func validate() throws {
        if let n = pageSize, n < 512 || n > 65536 || n & (n - 1) != 0 {
            throw ValidationError("--page-size \(n): SQLite's page size is a power of two from 512 to 65536")
        }
    }

    func run() throws {
        try reporting {
            openedCatalog = db
            try refuseUnwritable()
            let conn = try Database.open(db, create: true)
            // Everything that refuses is checked before anything is written
            // (the page size and WAL mode below write the file's header), so
            // a refused init leaves the file as it was; and again under the
            // write lock (`Schema.create`), against another init of the same
            // new file at the same moment, which could set the size first.
            do {
                try Schema.refuseExisting(conn)
            } catch let e as CatalogError {
                throw CatalogError("\(db): \(e.message)" + (try otherPageSizeHint(conn)))
            }
            try requirePageSize(conn)
            if let n = pageSize, try conn.scalar("PRAGMA page_count").int64 == 0 {
                try conn.execute("PRAGMA page_size = \(n)")
            }
            try conn.execute("PRAGMA journal_mode = WAL")
            do {
                try Schema.create(conn, whileLocked: { try requirePageSize(conn) })
            } catch let e as CatalogError {
                throw CatalogError("\(db): \(e.message)")
            }
            print("created geofence catalog (schema version \(Schema.currentVersion)) in \(db)")
        }
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
    private func otherPageSizeHint(_ conn: Connection) throws -> String {
        guard let n = pageSize, let had = try? conn.scalar("PRAGMA page_size").int64, had != Int64(n) else { return "" }
        return "; its pages are \(had) bytes, and `sqlite3 \(Echo.shellWord(db)) 'PRAGMA journal_mode = DELETE; PRAGMA page_size = \(n); "
            + "VACUUM; PRAGMA journal_mode = WAL'` rewrites it with \(n)-byte pages"
    }

    /// A file or folder this user cannot write, said before SQLite's "unable to open".
    private func refuseUnwritable() throws {
        var st = stat()
        if stat(db, &st) == 0, st.st_mode & S_IFMT == S_IFDIR {
            throw InputError("\(db) is a directory: name the database file to create, e.g. \(Echo.shellWord(db + "/fences.db"))")
        }
        let slash = db.lastIndex(of: "/")
        let folder = slash.map { $0 == db.startIndex ? "/" : String(db[..<$0]) } ?? "."
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
