import ArgumentParser
import GeofenceCore
import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `geofence prune CATALOG [--before DATE | --older-than AGE]`: retention
/// (docs/operations.md, "Retention"). Removes old notifications,
/// explanations and runs by `Pruning`'s rules, `--chunk-rows` rows per
/// transaction: a kill or a full disk loses at most the chunk under way,
/// and the next prune goes on from what is left. Without a cutoff it uses
/// the catalog's retention settings (`Retention`). Then prints the counts
/// and the file's free pages, and with `--vacuum` gives those back to the
/// file system (one VACUUM: all of it or, failing, none).
struct Prune: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove old notifications, explanations and runs, in bounded transactions; the subjects' state stays.",
        discussion: """
            Removes notifications whose time is before the cutoff, explanations whose fix's time is before it, and runs \
            that started before it once none of their rows is left (never the newest run). The subjects' state, \
            including the days the suppression rules read, is not touched. Without --before or --older-than, each kind \
            goes by the catalog's setting retention_notifications, retention_explanations or retention_runs \
            (e.g. `geofence settings DB retention_notifications 90d`); a kind without one is kept. \
            Each chunk of --chunk-rows rows is a transaction of its own: a kill loses at most the chunk under way, and \
            running prune again goes on. The freed pages are reused by later runs; --vacuum gives them back to the file system.
            """)
    @Argument(help: "The database file.") var db: String
    @Option(parsing: .unconditional, help: "Remove what is older than this: a date (2026-10-01, its start in UTC) or a date-time with its offset (2026-10-01T00:00:00+09:00).")
    var before: String?
    @Option(name: .customLong("older-than"), parsing: .unconditional, help: "Remove what is older than this many days before now: 30d or '30 days'.")
    var olderThan: String?
    @Option(name: .customLong("chunk-rows"), help: "Rows removed per transaction.") var chunkRows: Int = 50_000
    @Flag(help: "Then VACUUM the catalog, so the file shrinks by the freed pages (needs free space about the file's size; on failure the catalog stays as the prune left it).")
    var vacuum = false

    func run() throws {
        try reporting {
            guard chunkRows >= 1 else { throw InputError("must be 1 or more, got \(chunkRows)", field: "--chunk-rows") }
            let given = try givenCutoffs()
            let conn = try openCatalog(db)
            let cutoffs = try given ?? Retention.cutoffs(Settings(conn), now: Timestamp(microseconds: Int64(time(nil)) * 1_000_000))
            guard !cutoffs.isEmpty else {
                throw InputError("no --before or --older-than, and the catalog has no retention setting ("
                                 + Retention.keys.map(\.key).joined(separator: ", ")
                                 + "): give a cutoff, or set one (`geofence settings \(db) retention_notifications 90d`)")
            }
            let pruning = Pruning(conn, cutoffs: cutoffs)
            var removed = Pruning.Counts()
            var committed = 0
            do {
                // A signal between chunks (after a COMMIT) ends the loop: what was committed stands.
                while !pruning.isDone && SignalEnding.pendingSignal == 0 {
                    removed += try conn.transaction {
                        let counts = try pruning.step(limit: chunkRows)
                        TestStops.reach(.chunk)
                        return counts
                    }
                    committed += 1
                    SignalEnding.chunkCommitted = true   // a signal now rolls back only the chunk under way
                    // The chunk's pages copied into the file now: the -wal then starts over
                    // at the next chunk instead of growing by every chunk until SQLite's own
                    // checkpoint (1,000 pages), which a nearly full disk has no room for.
                    // PASSIVE: never waits for a reader, so a reader only makes it copy less.
                    _ = try? conn.execute("PRAGMA main.wal_checkpoint(PASSIVE)")
                }
            } catch let e as SQLiteError where e.isDiskFull {
                report(removed, cutoffs, stopped: committed > 0)
                throw CatalogError(file: db, "the disk filled during a chunk of --chunk-rows \(chunkRows) (\(e.message)); that chunk was "
                                   + "rolled back\(committed > 0 ? ", the \(committed) before it stand" : ""): free some space, or run "
                                   + "prune again with a smaller --chunk-rows (a chunk needs room for its pages in the -wal or -journal)")
            } catch {
                report(removed, cutoffs, stopped: committed > 0)
                throw error
            }
            report(removed, cutoffs, stopped: SignalEnding.pendingSignal != 0 && committed > 0)
            if vacuum && SignalEnding.pendingSignal == 0 { try vacuumCatalog(conn) }
            try reportSpace(conn)
        }
    }

    /// The cutoffs --before or --older-than give, nil for neither; a bad
    /// value is an input error naming the option and the value.
    func givenCutoffs() throws -> PruneCutoffs? {
        switch (before, olderThan) {
        case (.some, .some):
            throw InputError("give --before or --older-than, not both", field: "--older-than")
        case (let text?, nil):
            do { return .all(try Retention.cutoff(text)) } catch let e as InputError { throw InputError(e.message, field: "--before") }
        case (nil, let text?):
            guard let days = Retention.days(text) else {
                throw InputError("must be \(Retention.ageForm), got \(Echo.quoted(text))", field: "--older-than")
            }
            return .all(Retention.cutoff(days: days, before: Timestamp(microseconds: Int64(time(nil)) * 1_000_000)))
        case (nil, nil):
            return nil
        }
    }

    /// One line per kind: what was removed and before when, or why it was kept.
    func report(_ removed: Pruning.Counts, _ cutoffs: PruneCutoffs, stopped: Bool) {
        let kinds: [(String, Int64, Timestamp?, String)] = [
            ("notifications", removed.notifications, cutoffs.notifications, "retention_notifications"),
            ("explanations", removed.explanations, cutoffs.explanations, "retention_explanations"),
            ("runs", removed.runs, cutoffs.runs, "retention_runs"),
        ]
        for (name, count, cutoff, key) in kinds {
            if let cutoff {
                print("\(name): removed \(count) (before \(cutoff))")
            } else {
                print("\(name): kept (the catalog has no \(key) setting)")
            }
        }
        if stopped { print("stopped before the end: the chunks above stand; run prune again to go on") }
    }

    /// VACUUM: the file rewritten without its free pages, in one step that
    /// leaves the catalog as it was if it fails (a full disk).
    func vacuumCatalog(_ conn: Connection) throws {
        do {
            try conn.execute("VACUUM")
        } catch let e as SQLiteError where e.isDiskFull {
            throw CatalogError(file: db, "VACUUM ran out of space (\(e.message)); the catalog is as the prune left it, its free pages "
                               + "inside it: VACUUM needs free space about the file's size, in the temporary folder and beside the catalog")
        }
    }

    /// The file's pages and how many are free, for the user to judge whether a VACUUM is worth it.
    func reportSpace(_ conn: Connection) throws {
        let size = try conn.scalar("PRAGMA main.page_size").int64 ?? 0
        let pages = try conn.scalar("PRAGMA main.page_count").int64 ?? 0
        let free = try conn.scalar("PRAGMA main.freelist_count").int64 ?? 0
        print("free pages: \(free) of \(pages) (\(size) bytes each)" + (free > 0 ? ": later runs reuse them; --vacuum gives them back to the file system" : ""))
    }
}
