extension Session {
    /// What the cached catalog was read with: while the database shows the
    /// same, the catalog is the one cached.
    struct Stamp: Equatable {
        /// This connection's total changes (0 with the catalog attached apart: its writes go to main).
        var changes: Int64
        /// The data_version of the database holding the catalog.
        var dataVersion: Int64
        /// `gf_meta.catalog_stamp`.
        var catalog: String
        /// The schema versions of main, temp and an attached catalog, as one number.
        var schema: Int64
        /// With the catalog attached: the attached databases (names and files) as one number, 0 otherwise.
        /// A DETACH and ATTACH can put another catalog first while the old one's versions stay as they were.
        var databases: Int64 = 0
        static let none = Stamp(changes: -1, dataVersion: -1, catalog: "", schema: -1, databases: -1)
    }
}
