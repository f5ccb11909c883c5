/// SpatiaLite's compressed polygon encoding, written: a MultiPolygon (class 6)
/// whose members are compressed Polygons (class 1000003). In each ring the
/// first and last vertices are doubles, as in the plain form, and every vertex
/// between them is a pair of float32 deltas from the vertex before it, 8
/// bytes instead of 16. Every SpatiaLite function reads it (it is SpatiaLite's
/// own `CompressGeometry` form), and so does `decodeAreal`.
///
/// The encoding is lossy: a vertex read back can differ from the one written
/// by the rounding of its delta to float32, about 6e-8 of the delta. So it is
/// only for shapes the engine derives itself and whose contract has room for
/// that rounding (a circle's enclosing 32-gon, `CircleEnvelope.blob`); a
/// user's polygon is always stored exactly, uncompressed.
///
/// Each delta is taken from the vertex as a reader will rebuild it, not as it
/// was given, so the rounding of one delta is carried into the next instead
/// of adding up along the ring: every vertex read back is within one delta's
/// rounding of the vertex given.
extension SpatiaLiteBlob {
    /// The compressed MultiPolygon BLOB of `polygons`. The MBR in its header
    /// is that of the vertices a reader rebuilds, so it bounds exactly what
    /// every reader sees. Nil when a rebuilt vertex would fall outside
    /// longitude ±180 or latitude ±90, which a reader refuses.
    public static func encodeCompressedMultiPolygon(_ polygons: [Polygon], srid: Int32 = 4326) -> [UInt8]? {
        let rings = polygons.map { $0.rings.map(CompressedRing.init) }
        let read = rings.map { Polygon($0.map(\.read)) }
        var box = BoundingBox.empty
        for p in read { for ring in p.rings { for pt in ring.points { box.add(pt) } } }
        guard box.minLon >= -180, box.maxLon <= 180, box.minLat >= -90, box.maxLat <= 90 else { return nil }
        var w = Writer()
        w.byte(0x00); w.byte(0x01); w.int32(srid)
        w.double(box.minLon); w.double(box.minLat); w.double(box.maxLon); w.double(box.maxLat)
        w.byte(0x7C); w.int32(6); w.int32(Int32(polygons.count))
        for p in rings {
            w.byte(0x69); w.int32(1_000_003); w.int32(Int32(p.count))
            for ring in p { ring.write(&w) }
        }
        w.byte(0xFE)
        return w.bytes
    }

    /// One ring in compressed form: the float32 steps written, and the ring a
    /// reader rebuilds from them (the ends exact, each vertex between them the
    /// one rebuilt before it plus its step, in double as SpatiaLite adds them).
    struct CompressedRing {
        private(set) var read = Ring([])
        private var steps: [(Float, Float)] = []

        init(_ ring: Ring) {
            let pts = ring.points
            var out: [LonLat] = []
            out.reserveCapacity(pts.count)
            for (k, p) in pts.enumerated() {
                guard k > 0, k < pts.count - 1, let last = out.last else { out.append(p); continue }
                let step = (Float(p.lon - last.lon), Float(p.lat - last.lat))
                steps.append(step)
                out.append(LonLat(lon: last.lon + Double(step.0), lat: last.lat + Double(step.1)))
            }
            read = Ring(out)
        }

        /// Its vertex count, its ends as doubles and the steps between them.
        func write(_ w: inout Writer) {
            let pts = read.points
            w.int32(Int32(pts.count))
            guard let first = pts.first, let last = pts.last else { return }
            w.double(first.lon); w.double(first.lat)
            guard pts.count > 1 else { return }
            for (x, y) in steps { w.float(x); w.float(y) }
            w.double(last.lon); w.double(last.lat)
        }
    }
}
