import ArgumentParser
import GeofenceCore
import GeofenceHost
import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Runs a command body and turns every known error into one clear line on
/// stderr and exit status 1 (input errors) or 2 (database and other errors).
func reporting(_ body: () throws -> Void) throws {
    do {
        try body()
        // A signal that came during a write transaction ends the process once the transaction has ended.
        // (Its connection has been released, so closed: SQLite has removed its side files.)
        if SignalEnding.pendingSignal != 0 { SignalEnding.endBySignal() }
    } catch where SignalEnding.pendingSignal != 0 {
        SignalEnding.endBySignal()
    } catch let e as InputError {
        fail("error: \(e)", code: 1)
    } catch let e as CatalogError {
        fail("error: \(e)", code: 2)
    } catch let e as SQLiteError where e.code & 0xFF == 5 || e.code & 0xFF == 6 {
        // SQLITE_BUSY / SQLITE_LOCKED after the busy timeout: say who is in the way.
        fail("error: \(openedCatalog.map { $0 + ": " } ?? "")the database is busy: another process has held it locked for over \(Database.busyTimeoutSeconds) s "
             + "(a writer, such as an import or judgement, or on a catalog not in WAL mode also a reader inside a long transaction); "
             + "nothing was changed, try again when it has finished (\(e.message))", code: 3)
    } catch let e as SQLiteError where ReadOnlyCatalog.writeRefused(e) != nil {
        fail("error: " + (ReadOnlyCatalog.writeRefused(e) ?? ""), code: 2)
    } catch let e as SQLiteError where e.isDiskFull {
        // A full disk shows as SQLITE_FULL, or as an I/O error whose errno is ENOSPC: both say so in the user's terms.
        fail("error: \(openedCatalog ?? "database"): no space left on device for the catalog or the files SQLite keeps beside it "
             + "(its -wal and -shm): free some space on that disk and try again (\(e))", code: 2)
    } catch let e as SQLiteError {
        fail("error: \(openedCatalog ?? "database"): \(e)", code: 2)
    } catch let e as Database.OpenError {
        fail("error: \(e)", code: 2)
    }
}

func fail(_ message: String, code: Int32) -> Never {
    fputs(message + "\n", stderr)
    exit(code)
}

func warn(_ message: String) { fputs(message + "\n", stderr) }

/// The catalog this command opened, for messages about it.
nonisolated(unsafe) var openedCatalog: String?

/// Names `path` in this command's errors, and in what a signal that ends it says.
func naming(catalog path: String) {
    openedCatalog = path
    SignalEnding.name(catalog: path)
}

/// Opens the catalog: checks the schema version and upgrades an older one.
func openCatalog(_ path: String) throws -> Connection {
    naming(catalog: path)
    do {
        if let reason = ReadOnlyCatalog.reason(path) { return try ReadOnlyCatalog.open(path, reason: reason) }
        let db = try Database.open(path)
        let before = try Schema.state(of: db)
        try Schema.open(db)
        if case .older(let v) = before {
            warn("\(path): upgraded the catalog in place from schema version \(v) to \(Schema.currentVersion) (docs/versions.md)")
        }
        return db
    } catch let e as CatalogError {
        throw e.about(file: path)
    }
}
