import GeofenceCore

/// gf_areas' R*Tree read node by node, for searches that go nearest first
/// (`NearestAreas`), which the virtual table's box queries cannot do.
///
///     SELECT data FROM idx_gf_areas_geom_node WHERE nodeno = 1;   -- the root
///
/// How it works: SQLite keeps an R*Tree in shadow tables; `%_node` holds one
/// row per node, `data` a blob of a 2-byte depth (meaningful in the root,
/// node 1: the number of levels below it), a 2-byte cell count, then the
/// cells. A cell of a two-dimensional `rtree` is an 8-byte child node number
/// (in a leaf, depth 0: the indexed row id, gf_areas.id) and four 4-byte
/// floats, xmin, xmax, ymin, ymax; every integer and float is big-endian.
/// Stored boxes are rounded outward to 32-bit floats, so each holds its row's
/// box, and a node's box holds its children's.
///
/// Contract: `open` gives nil when the index is not SpatiaLite's plain
/// two-dimensional `rtree` of five columns (another layout is read through the
/// virtual table instead). A node that is missing, shorter than its cell
/// count, deeper than SQLite allows, or reached twice is a damaged index: an
/// error naming the node, never a wrong walk. Reads see the connection's own
/// uncommitted writes, as the virtual table does.
public final class RTreeNodes {
    public struct Cell: Sendable {
        /// A child node number, or in a leaf the area's row id.
        public var id: Int64
        public var box: BoundingBox
    }

    /// SQLite's R*Tree refuses trees deeper than this (RTREE_MAX_DEPTH).
    static let maxDepth = 40
    static let cellBytes = 8 + 4 * 4

    private let read: Statement
    /// The node a row id's cell lies in, and a node's parent: to check the root's depth.
    private let leafOf: Statement, parentOf: Statement
    private var visited = Set<Int64>()

    private init(_ db: Connection, _ tables: CatalogTables) throws {
        read = try db.prepare("SELECT data FROM \(tables.named("idx_gf_areas_geom_node")) WHERE nodeno = ?")
        leafOf = try db.prepare("SELECT nodeno FROM \(tables.named("idx_gf_areas_geom_rowid")) WHERE rowid = ?")
        parentOf = try db.prepare("SELECT parentnode FROM \(tables.named("idx_gf_areas_geom_parent")) WHERE nodeno = ?")
    }

    /// The reader, or nil when the index is not a plain 2-D `rtree(pkid, xmin, xmax, ymin, ymax)`.
    static func open(_ db: Connection, _ tables: CatalogTables) throws -> RTreeNodes? {
        try isPlain(db, tables) ? RTreeNodes(db, tables) : nil
    }

    /// Whether the index is a plain 2-D `rtree(pkid, xmin, xmax, ymin, ymax)` with its three shadow tables.
    /// Its whole stored text must be SpatiaLite's but for spacing, case and
    /// quotes: a text that only ends so can hide another module or more
    /// columns behind a comment (`rtree_i32(… -- rtree(…`), whose nodes
    /// read or written as floats would be garbage.
    static func isPlain(_ db: Connection, _ tables: CatalogTables) throws -> Bool {
        let sql = try db.scalar("""
            SELECT sql FROM \(tables.named("sqlite_master")) WHERE type = 'table' AND name = 'idx_gf_areas_geom'
            """).string ?? ""
        let squeezed = String(sql.lowercased().unicodeScalars.filter { !$0.properties.isWhitespace && $0 != "\"" })
        guard squeezed == "createvirtualtableidx_gf_areas_geomusingrtree(pkid,xmin,xmax,ymin,ymax)" else { return false }
        let shadow = try db.scalar("""
            SELECT count(*) FROM \(tables.named("sqlite_master")) WHERE type = 'table'
            AND name IN ('idx_gf_areas_geom_node', 'idx_gf_areas_geom_rowid', 'idx_gf_areas_geom_parent')
            """)
        return shadow.int64 == 3
    }

    /// Starts a new walk: every node may be read once per walk.
    public func beginWalk() { visited.removeAll(keepingCapacity: true) }

    /// The root's depth (0: the root is a leaf) and its cells. The depth is
    /// the only one stored, so it is checked against the shadow tables: a
    /// leaf's first cell is a row whose cell lies in the root, an inner
    /// node's first cell a node whose parent is the root (a root that says
    /// it is a leaf while it holds nodes would have node numbers read as
    /// areas).
    public func root() throws -> (depth: Int, cells: [Cell]) {
        let (depth, cells) = try node(1) { data in
            let depth = Int(Self.uint16(data, 0))
            guard depth <= Self.maxDepth else { throw Self.damaged(1, "its depth \(depth) is past SQLite's limit of \(Self.maxDepth)") }
            return (depth, try Self.cells(data, node: 1))
        }
        if let first = cells.first {
            let lookup = depth == 0 ? leafOf : parentOf
            try lookup.bind([.integer(first.id)])
            defer { lookup.reset() }
            guard try lookup.step(), lookup.value(0).int64 == 1 else {
                throw Self.damaged(1, "its depth \(depth) does not match the tree's other tables")
            }
        }
        return (depth, cells)
    }

    /// The cells of node `number`.
    public func cells(ofNode number: Int64) throws -> [Cell] {
        try node(number) { try Self.cells($0, node: number) }
    }

    private func node<T>(_ number: Int64, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        guard visited.insert(number).inserted else { throw Self.damaged(number, "it is reached twice") }
        try read.bind([.integer(number)])
        defer { read.reset() }
        guard try read.step() else { throw Self.damaged(number, "it is missing") }
        return try read.withBlob(0) { try body($0) }
    }

    private static func cells(_ data: UnsafeRawBufferPointer, node: Int64) throws -> [Cell] {
        guard data.count >= 4 else { throw damaged(node, "it has \(data.count) bytes") }
        let count = Int(uint16(data, 2))
        guard 4 + count * cellBytes <= data.count else {
            throw damaged(node, "its \(count) cells need \(4 + count * cellBytes) bytes and it has \(data.count)")
        }
        var out: [Cell] = []
        out.reserveCapacity(count)
        for i in 0..<count {
            let at = 4 + i * cellBytes
            out.append(Cell(id: Int64(bitPattern: uint64(data, at)),
                            box: BoundingBox(minLon: Double(float(data, at + 8)), minLat: Double(float(data, at + 16)),
                                             maxLon: Double(float(data, at + 12)), maxLat: Double(float(data, at + 20)))))
        }
        return out
    }

    private static func uint16(_ d: UnsafeRawBufferPointer, _ at: Int) -> UInt16 {
        UInt16(d[at]) << 8 | UInt16(d[at + 1])
    }

    private static func uint32(_ d: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(d[at + $1]) }
    }

    private static func uint64(_ d: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(d[at + $1]) }
    }

    private static func float(_ d: UnsafeRawBufferPointer, _ at: Int) -> Float {
        Float(bitPattern: uint32(d, at))
    }

    private static func damaged(_ node: Int64, _ why: String) -> CatalogError {
        CatalogError("the spatial index idx_gf_areas_geom is damaged: node \(node) cannot be read (\(why)); "
                     + "rebuild it in a SpatiaLite shell: SELECT DisableSpatialIndex('gf_areas', 'geom'); "
                     + "DROP TABLE idx_gf_areas_geom; SELECT CreateSpatialIndex('gf_areas', 'geom');")
    }
}
