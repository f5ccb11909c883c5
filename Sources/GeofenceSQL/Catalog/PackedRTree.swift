/// gf_areas' R*Tree written whole and packed, straight into SQLite's shadow
/// tables, when an import brings at least as many areas as the index held:
///
///     SELECT rtreecheck('idx_gf_areas_geom');   -- 'ok': the tree is whole
///     SELECT count(*) FROM idx_gf_areas_geom_node;   -- a million areas: ~20,000 nodes, not ~28,600
///
/// Why: one R*Tree insert a row walks the tree and splits nodes (a million
/// areas: ~15 s of an import's time) and leaves its nodes about two thirds
/// full; packed, every node but a slice's last holds all the cells a node can
/// (51), so the index takes fewer pages and is written in about a second.
/// The boxes are the ones the module would store, so every query of the index
/// gives the same rows (benchmarks/results.md measures both).
///
/// How it works: SQLite's `rtree` keeps its nodes in `%_node` (nodeno, data:
/// a 2-byte depth, read only in the root, node 1; a 2-byte cell count; cells
/// of an 8-byte id and four 4-byte floats xmin, xmax, ymin, ymax, all
/// big-endian; zero-padded to the node size, which is the root's length),
/// each row's leaf in `%_rowid` and each node's parent in `%_parent`
/// (`RTreeNodes` reads the same layout). A box is rounded to floats as the
/// module rounds a row it is given (`down`, `up`), and an inner cell's box is
/// the union of its node's cells. Nodes are grouped Sort-Tile-Recursive: by
/// the centre's x into ⌈√leaves⌉ slices, each slice by the centre's y into
/// nodes of 51 cells, ties by id (the same catalog gives the same tree); each level
/// above is grouped the same way until one node, the root, is left.
///
/// Contract: `write` replaces the tree's contents with exactly `entries`;
/// its caller runs it inside the import's transaction (a failure rolls it back
/// with the rows) and only on a plain `rtree(pkid, xmin, xmax, ymin, ymax)`.
struct PackedRTree {
    struct Entry {
        var id: Int64
        var minX: Float, maxX: Float, minY: Float, maxY: Float

        /// The entry the module itself would store for this box; nil where it
        /// would refuse the row (a minimum above its maximum, or not a number),
        /// so that the caller lets the module say so.
        init?(id: Int64, minX: Double, maxX: Double, minY: Double, maxY: Double) {
            self.id = id
            self.minX = PackedRTree.down(minX); self.maxX = PackedRTree.up(maxX)
            self.minY = PackedRTree.down(minY); self.maxY = PackedRTree.up(maxY)
            guard self.minX <= self.maxX, self.minY <= self.maxY else { return nil }
        }

        /// The box of a node's cells (at least one), under the node's index as its id.
        init(id: Int64, union cells: ArraySlice<Entry>) {
            self = cells.first!
            self.id = id
            for c in cells {
                minX = min(minX, c.minX); maxX = max(maxX, c.maxX)
                minY = min(minY, c.minY); maxY = max(maxY, c.maxY)
            }
        }

        var centreX: Double { (Double(minX) + Double(maxX)) / 2 }
        var centreY: Double { (Double(minY) + Double(maxY)) / 2 }
    }

    /// SQLite's rounding of a minimum it stores as a float (rtree.c,
    /// rtreeValueDown): never above the value, and its own factor when the
    /// nearest float is.
    static func down(_ d: Double) -> Float {
        let f = Float(d)
        return Double(f) > d ? Float(d * (d < 0 ? 1 + 1.0 / 8_388_608 : 1 - 1.0 / 8_388_608)) : f
    }

    /// The same for a maximum (rtreeValueUp): never below the value.
    static func up(_ d: Double) -> Float {
        let f = Float(d)
        return Double(f) < d ? Float(d * (d < 0 ? 1 - 1.0 / 8_388_608 : 1 + 1.0 / 8_388_608)) : f
    }

    static let cellBytes = 8 + 4 * 4
    /// The most cells the module puts in a node it makes (RTREE_MAXCELLS):
    /// a packed node holds no more, whatever its size allows.
    static let maxCells = 51
    /// The smallest node the module reads (512 − 64 bytes; below it: "undersize RTree blobs").
    static let minNodeSize = 448

    /// The index's node size (the root's length), once the module has
    /// opened the tree (so a tree it refuses fails the import as before);
    /// nil when the module would refuse it.
    static func nodeSize(_ db: Connection) throws -> Int? {
        _ = try db.query("SELECT pkid FROM idx_gf_areas_geom LIMIT 1")
        let size = try db.scalar("SELECT length(data) FROM idx_gf_areas_geom_node WHERE nodeno = 1").int64.map(Int.init)
        guard let size, size >= minNodeSize else { return nil }
        return size
    }

    /// One level of the tree: its nodes' cells, each node a range of `cells`.
    private struct Level {
        var cells: [Entry]
        var nodes: [Range<Int>]
    }

    /// Groups `items` into nodes of at most `capacity` cells, STR's way.
    private static func group(_ items: consuming [Entry], capacity: Int) -> Level {
        var cells = items
        let leaves = (cells.count + capacity - 1) / capacity
        let slices = max(1, Int(Double(leaves).squareRoot().rounded(.up)))
        let perSlice = slices * capacity
        cells.sort { ($0.centreX, $0.id) < ($1.centreX, $1.id) }
        var nodes: [Range<Int>] = []
        for start in stride(from: 0, to: cells.count, by: perSlice) {
            let end = min(start + perSlice, cells.count)
            cells[start..<end].sort { ($0.centreY, $0.id) < ($1.centreY, $1.id) }
            for first in stride(from: start, to: end, by: capacity) { nodes.append(first..<min(first + capacity, end)) }
        }
        // No entries: the root alone, a leaf of no cells (as the module makes an empty tree).
        return Level(cells: cells, nodes: nodes.isEmpty ? [0..<0] : nodes)
    }

    /// Replaces the tree's contents with `entries` (see the type's contract).
    static func write(_ entries: consuming [Entry], into db: Connection, nodeSize: Int) throws {
        let capacity = min(maxCells, (nodeSize - 4) / cellBytes)
        let count = entries.count
        // Levels from the leaves up; an inner cell's id is its node's index in the level below.
        var levels = [group(consume entries, capacity: capacity)]
        while levels[levels.count - 1].nodes.count > 1 {
            let below = levels[levels.count - 1]
            let boxes = below.nodes.enumerated().map { Entry(id: Int64($0.offset), union: below.cells[$0.element]) }
            levels.append(group(boxes, capacity: capacity))
        }
        // Node numbers from the root (1) down, level by level.
        var numbers: [[Int64]] = Array(repeating: [], count: levels.count)
        var next: Int64 = 1
        for l in levels.indices.reversed() {
            numbers[l] = (0..<levels[l].nodes.count).map { i in next + Int64(i) }
            next += Int64(levels[l].nodes.count)
        }
        for table in ["node", "rowid", "parent"] { try db.execute("DELETE FROM idx_gf_areas_geom_\(table)") }
        let node = try db.prepare("INSERT INTO idx_gf_areas_geom_node (nodeno, data) VALUES (?, ?)")
        let parent = try db.prepare("INSERT INTO idx_gf_areas_geom_parent (nodeno, parentnode) VALUES (?, ?)")
        var leafOf: [(id: Int64, node: Int64)] = []
        leafOf.reserveCapacity(count)
        for l in levels.indices {
            let level = levels[l]
            for (i, range) in level.nodes.enumerated() {
                let number = numbers[l][i]
                var data = [UInt8](repeating: 0, count: nodeSize)
                if number == 1 { put(UInt16(levels.count - 1), into: &data, at: 0) }
                put(UInt16(range.count), into: &data, at: 2)
                for (k, cell) in level.cells[range].enumerated() {
                    let child = l == 0 ? cell.id : numbers[l - 1][Int(cell.id)]
                    put(cell, id: child, into: &data, at: 4 + k * cellBytes)
                    if l == 0 { leafOf.append((cell.id, number)) } else { try parent.run([.integer(child), .integer(number)]) }
                }
                try node.run([.integer(number), .blob(data)])
            }
        }
        // In row id order: the rowid table is appended to, page after page.
        leafOf.sort { $0.id < $1.id }
        let rowid = try db.prepare("INSERT INTO idx_gf_areas_geom_rowid (rowid, nodeno) VALUES (?, ?)")
        for (id, leaf) in leafOf {
            try rowid.bind(integer: id, at: 1)
            try rowid.bind(integer: leaf, at: 2)
            try rowid.runBound()
        }
    }

    private static func put(_ v: UInt16, into data: inout [UInt8], at: Int) {
        data[at] = UInt8(v >> 8); data[at + 1] = UInt8(v & 0xff)
    }

    private static func put(_ cell: Entry, id: Int64, into data: inout [UInt8], at: Int) {
        let id = UInt64(bitPattern: id)
        for b in 0..<8 { data[at + b] = UInt8(truncatingIfNeeded: id >> (56 - 8 * UInt64(b))) }
        for (k, f) in [cell.minX, cell.maxX, cell.minY, cell.maxY].enumerated() {
            let bits = f.bitPattern
            for b in 0..<4 { data[at + 8 + 4 * k + b] = UInt8(truncatingIfNeeded: bits >> (24 - 8 * UInt32(b))) }
        }
    }
}
