import XCTest
import Foundation
@testable import GeofenceSQL

/// The binaries carry the schema as Swift strings; sql/ is the source of truth.
final class EmbeddedSQLTests: XCTestCase {
    func testEmbeddedSchemaMatchesSQLFiles() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = root.appendingPathComponent("sql")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".sql") }.sorted()
        XCTAssertEqual(files, EmbeddedSQL.migrations.map(\.1), "run scripts/embed-sql.sh")
        for (version, name, script) in EmbeddedSQL.migrations {
            XCTAssertEqual(Int(name.prefix(3)), version)
            let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
            XCTAssertEqual(script.trimmingCharacters(in: .whitespacesAndNewlines), text.trimmingCharacters(in: .whitespacesAndNewlines),
                           "\(name) differs from EmbeddedSQL.swift: run scripts/embed-sql.sh")
        }
    }
}
