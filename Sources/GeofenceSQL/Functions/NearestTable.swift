import CSQLite
import GeofenceCore

/// gf_nearest: the N catalog areas nearest to a position, as a table.
///
///     SELECT rank, area_id, distance_m FROM gf_nearest(35.7125, 139.7710, 3);
///     -- 1|AREA_ID_001|0.0        (inside: distance 0)
///     -- 2|AREA_ID_003|812.4...
///     SELECT * FROM gf_nearest(35.7125, 139.7710, 20, '2026-11-22T09:00:00+09:00');
///
/// Contract: arguments lat, lon (degrees), n (1–10,000) and optionally at (a
/// time; then only areas valid at that time count). Rows come nearest first,
/// ties by area_id; distance_m is the geodesic distance to the area's boundary,
/// 0 when the position is inside. Fewer than n rows when the catalog has
/// fewer areas. A missing or bad argument is an SQL error naming it; a NULL
/// lat, lon or n gives no rows.
///
/// How it works: an eponymous virtual table whose hidden columns lat, lon, n
/// and at take the call's arguments; xFilter runs `NearestAreas` (a walk of the
/// R*Tree's nodes, nearest first, until the answer is certain) and the
/// cursor walks the result. Each connection's table keeps its own prepared statements and
/// shape cache, released in xDisconnect, before the connection closes.
enum NearestTable {
    static let signature = FunctionSignature(name: "gf_nearest", argumentNames: ["lat", "lon", "n", "at"])

    static let schema = """
        CREATE TABLE x(rank INTEGER, area_id TEXT, distance_m REAL,
                       lat REAL HIDDEN, lon REAL HIDDEN, n INTEGER HIDDEN, at TEXT HIDDEN)
        """
    static let hidden = (lat: Int32(3), lon: Int32(4), n: Int32(5), at: Int32(6))
    static let maxCount = 10_000

    final class Table {
        let search: NearestAreas
        init(_ db: Connection) { search = NearestAreas(db) }
    }

    final class Cursor {
        var rows: [NearestAreas.Found] = []
        var index = 0
        var lat = 0.0, lon = 0.0, n = 0, at: String?
    }

    static func register(_ db: Connection) throws {
        try db.check(sqlite.pointee.create_module_v2!(db.handle, "gf_nearest", module, nil, nil))
    }

    /// Written once, then only read by SQLite.
    nonisolated(unsafe) static let module: UnsafeMutablePointer<sqlite3_module> = {
        let m = UnsafeMutablePointer<sqlite3_module>.allocate(capacity: 1)
        m.initialize(to: sqlite3_module())
        m.pointee.iVersion = 1
        // xCreate stays nil: eponymous only, there is nothing to CREATE VIRTUAL TABLE.
        m.pointee.xConnect = connect
        m.pointee.xBestIndex = bestIndex
        m.pointee.xDisconnect = disconnect
        m.pointee.xOpen = open
        m.pointee.xClose = close
        m.pointee.xFilter = filter
        m.pointee.xNext = { cur in cursor(cur).index += 1; return SQLITE_OK }
        m.pointee.xEof = { cur in cursor(cur).index >= cursor(cur).rows.count ? 1 : 0 }
        m.pointee.xColumn = column
        m.pointee.xRowid = { cur, rowid in rowid?.pointee = Int64(cursor(cur).index + 1); return SQLITE_OK }
        return m
    }()

    static func cursor(_ c: UnsafeMutablePointer<sqlite3_vtab_cursor>?) -> Cursor {
        let base = UnsafeMutableRawPointer(c!).assumingMemoryBound(to: csqlite_vtab_cursor.self)
        return Unmanaged<Cursor>.fromOpaque(base.pointee.owner).takeUnretainedValue()
    }

    static func table(_ v: UnsafeMutablePointer<sqlite3_vtab>?) -> Table {
        let base = UnsafeMutableRawPointer(v!).assumingMemoryBound(to: csqlite_vtab.self)
        return Unmanaged<Table>.fromOpaque(base.pointee.owner).takeUnretainedValue()
    }

    static let connect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, UnsafePointer<UnsafePointer<CChar>?>?,
                                        UnsafeMutablePointer<UnsafeMutablePointer<sqlite3_vtab>?>?,
                                        UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 = { db, _, _, _, out, _ in
        guard let db, let out else { return SQLITE_ERROR }
        let rc = sqlite.pointee.declare_vtab!(db, schema)
        guard rc == SQLITE_OK else { return rc }
        let v = UnsafeMutablePointer<csqlite_vtab>.allocate(capacity: 1)
        v.initialize(to: csqlite_vtab())
        v.pointee.owner = Unmanaged.passRetained(Table(Connection(borrowing: db))).toOpaque()
        out.pointee = UnsafeMutableRawPointer(v).assumingMemoryBound(to: sqlite3_vtab.self)
        return SQLITE_OK
    }

    static let disconnect: @convention(c) (UnsafeMutablePointer<sqlite3_vtab>?) -> Int32 = { v in
        guard let v else { return SQLITE_OK }
        let base = UnsafeMutableRawPointer(v).assumingMemoryBound(to: csqlite_vtab.self)
        let t = Unmanaged<Table>.fromOpaque(base.pointee.owner)
        t.takeUnretainedValue().search.close()
        t.release()
        if let e = v.pointee.zErrMsg { sqlite.pointee.free!(e) }
        base.deallocate()
        return SQLITE_OK
    }

    /// Plans take lat, lon, n (and at) as equality constraints on the hidden
    /// columns; idxNum records which arrived, in argv order.
    static let bestIndex: @convention(c) (UnsafeMutablePointer<sqlite3_vtab>?, UnsafeMutablePointer<sqlite3_index_info>?) -> Int32 = { _, info in
        guard let info else { return SQLITE_ERROR }
        let i = info.pointee
        var slot: [Int32: Int] = [:]
        for k in 0..<Int(i.nConstraint) {
            let c = i.aConstraint[k]
            guard c.op == UInt8(SQLITE_INDEX_CONSTRAINT_EQ), c.iColumn >= hidden.lat else { continue }
            // An argument SQLite cannot give us in this plan: refuse the plan, not the query.
            guard c.usable != 0 else { return SQLITE_CONSTRAINT }
            slot[c.iColumn] = k
        }
        var mask: Int32 = 0, next: Int32 = 1
        for (bit, col) in [hidden.lat, hidden.lon, hidden.n, hidden.at].enumerated() {
            guard let k = slot[col] else { continue }
            mask |= 1 << Int32(bit)
            i.aConstraintUsage[k].argvIndex = next
            i.aConstraintUsage[k].omit = 1
            next += 1
        }
        info.pointee.idxNum = mask
        info.pointee.estimatedCost = mask & 7 == 7 ? 100 : 1e12
        info.pointee.estimatedRows = 20
        // Rows come out ordered by rank (= by distance): say so, and SQLite skips a sort.
        if i.nOrderBy == 1, [0, 2].contains(i.aOrderBy[0].iColumn), i.aOrderBy[0].desc == 0 {
            info.pointee.orderByConsumed = 1
        }
        return SQLITE_OK
    }

    static let open: @convention(c) (UnsafeMutablePointer<sqlite3_vtab>?, UnsafeMutablePointer<UnsafeMutablePointer<sqlite3_vtab_cursor>?>?) -> Int32 = { _, out in
        let c = UnsafeMutablePointer<csqlite_vtab_cursor>.allocate(capacity: 1)
        c.initialize(to: csqlite_vtab_cursor())
        c.pointee.owner = Unmanaged.passRetained(Cursor()).toOpaque()
        out?.pointee = UnsafeMutableRawPointer(c).assumingMemoryBound(to: sqlite3_vtab_cursor.self)
        return SQLITE_OK
    }

    static let close: @convention(c) (UnsafeMutablePointer<sqlite3_vtab_cursor>?) -> Int32 = { c in
        guard let c else { return SQLITE_OK }
        let base = UnsafeMutableRawPointer(c).assumingMemoryBound(to: csqlite_vtab_cursor.self)
        Unmanaged<Cursor>.fromOpaque(base.pointee.owner).release()
        base.deallocate()
        return SQLITE_OK
    }

    static let filter: @convention(c) (UnsafeMutablePointer<sqlite3_vtab_cursor>?, Int32, UnsafePointer<CChar>?, Int32,
                                       UnsafeMutablePointer<OpaquePointer?>?) -> Int32 = { c, mask, _, argc, argv in
        let cur = cursor(c)
        cur.rows = []; cur.index = 0
        do {
            guard mask & 7 == 7 else {
                throw FunctionError("gf_nearest needs lat, lon and n: SELECT * FROM gf_nearest(lat, lon, n [, at])")
            }
            let a = Arguments(signature: Self.signature, argv: argv, count: Int(argc), context: nil)
            // A NULL argument gives no rows, as a scalar gf_* function gives NULL.
            if (0..<3).contains(where: { a.isNull($0) }) { return SQLITE_OK }
            let p = try GeometryFunctions.position(a, lat: 0, lon: 1)
            let n = try RegionFunctions.count(a, 2)
            var at: Timestamp?
            if argc > 3, !a.isNull(3) {
                let text = try a.timeText(3)
                do { at = try Timestamp.parse(text) } catch { throw a.fail(3, "is not a time: \(error)") }
                cur.at = text
            }
            cur.lat = p.lat; cur.lon = p.lon; cur.n = n
            cur.rows = try table(c!.pointee.pVtab).search.nearest(to: p, count: n, at: at)
            return SQLITE_OK
        } catch {
            let message = (error as? FunctionError)?.message ?? "gf_nearest: \(error)"
            let v = c!.pointee.pVtab!
            if let old = v.pointee.zErrMsg { sqlite.pointee.free!(old) }
            v.pointee.zErrMsg = sqliteOwnedString(message)
            return SQLITE_ERROR
        }
    }

    static let column: @convention(c) (UnsafeMutablePointer<sqlite3_vtab_cursor>?, OpaquePointer?, Int32) -> Int32 = { c, ctx, col in
        guard let ctx else { return SQLITE_ERROR }
        let cur = cursor(c)
        let row = cur.rows[cur.index]
        let value: SQLiteValue
        switch col {
        case 0: value = .integer(Int64(cur.index + 1))
        case 1: value = .text(row.areaId)
        case 2: value = .real(row.distanceM)
        case hidden.lat: value = .real(cur.lat)
        case hidden.lon: value = .real(cur.lon)
        case hidden.n: value = .integer(Int64(cur.n))
        default: value = cur.at.map(SQLiteValue.text) ?? .null
        }
        setResult(ctx, value)
        return SQLITE_OK
    }
}
