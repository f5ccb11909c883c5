/// The triggers of the embedded schema (EmbeddedSQL.swift is generated from
/// sql/: these readers of it live here), for the code that re-creates them
/// from the engine's text: `CatalogStamp` (repair) and `ImportTriggers`.
extension EmbeddedSQL {
    /// (name, CREATE TRIGGER text as sqlite_master stores it) of each
    /// trigger migration `version` creates.
    static func triggers(inMigration version: Int) -> [(name: String, sql: String)] {
        guard let script = migrations.first(where: { $0.0 == version })?.2 else { return [] }
        return script.split(separator: "CREATE TRIGGER ", omittingEmptySubsequences: false).dropFirst().compactMap { chunk in
            guard let end = chunk.firstRange(of: "END;") else { return nil }
            let body = "CREATE TRIGGER " + chunk[..<end.lowerBound] + "END"
            let name = chunk.prefix { $0 != " " }
            return (String(name), body)
        }
    }

    /// Re-creates `triggers` from the engine's text (dropping any of the
    /// same name first), inside the caller's transaction.
    static func recreate(_ db: Connection, _ triggers: [(name: String, sql: String)]) throws {
        for t in triggers {
            try db.query("DROP TRIGGER IF EXISTS \"\(t.name)\"")
            try db.query(t.sql)  // one statement, prepared and stepped: nothing after it could run
        }
    }

    /// (name, CREATE text as sqlite_master stores it) of each view and index
    /// migration `version` creates (a statement up to its `;`).
    static func definitions(inMigration version: Int) -> [(name: String, sql: String)] {
        guard let script = migrations.first(where: { $0.0 == version })?.2 else { return [] }
        return ["CREATE VIEW ", "CREATE INDEX "].flatMap { head in
            script.split(separator: head, omittingEmptySubsequences: false).dropFirst().compactMap { chunk -> (name: String, sql: String)? in
                guard let end = chunk.firstIndex(of: ";") else { return nil }
                return (String(chunk.prefix { $0 != " " && $0 != "\n" }), head + chunk[..<end])
            }
        }
    }
}
