import XCTest
import GeofenceCore
import GeofenceHost
@testable import GeofenceSQL

/// A batch too large for memory spills its fixes to SQLite's temporary
/// database (`SpilledFixes`); that file must never be mapped into memory,
/// or every page of it read (to sort it, to drop it) stays resident until
/// the connection closes: 10 M spilled fixes held ~490 MiB of the process's
/// peak RSS that way. Reading the catalog unmapped for a while
/// (`Connection.unmapped`, on every chunk prepared on demand) and mapping it
/// again must map the catalog only, not the spill.
extension JudgementSQLTests {
    func testSpilledFixesAreNeverMappedEvenWhenTheCatalogIsMappedAgain() throws {
        let (features, rows, _) = walks()
        let db = try walksCatalog("spill-unmapped", features, defaultConditions: true)
        // A temporary database whose pages go to its file at once, so the
        // file is open (and could be mapped) while the chunks are prepared.
        try db.execute("CREATE TEMP TABLE opened (x); PRAGMA temp.cache_size = 4")
        let mapped = try db.scalar("PRAGMA main.mmap_size").int64 ?? 0
        XCTAssertGreaterThan(mapped, 0, "the catalog is opened mapped")
        let judgement = try Judgement(db)
        judgement.inMemoryFixes = 300
        judgement.maxPreparedAreas = 5
        judgement.chunkFixes = 100
        judgement.onDemandChunkFixes = 100
        let report = try db.transaction { () throws -> Judgement.Report in
            let report = try judgement.run(rows, source: "test")
            XCTAssertEqual(try db.scalar("PRAGMA temp.mmap_size").int64, 0, "the spill's file is mapped")
            XCTAssertEqual(try db.scalar("PRAGMA main.mmap_size").int64, mapped, "the catalog is mapped again")
            return report
        }
        XCTAssertEqual(report.counters.judged, rows.count)
    }
}
