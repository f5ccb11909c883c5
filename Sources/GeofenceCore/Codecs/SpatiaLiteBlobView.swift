extension SpatiaLiteBlob {
    /// The commonest SpatiaLite area BLOB read in place, without allocating:
    /// little-endian, SRID 4326 or 0, an XY Polygon or MultiPolygon, not
    /// compressed, with every vertex a valid lon/lat and not cut at ±180°.
    ///
    /// Why: in a SQL join the function receives the BLOB just read from the
    /// page, hot in the CPU cache, while a prepared copy of the same area is
    /// usually cold. For a small area, answering from the BLOB itself is
    /// cheaper than finding, comparing and reading the prepared copy.
    ///
    /// `init` returns nil for anything else, including every BLOB that
    /// `decodeAreal` would refuse, so the caller falls back to the full
    /// decoder, which names the error. What it accepts, it accepts exactly
    /// as `decodeAreal` would: the same structure checks, the same vertices.
    public struct FlatView {
        let bytes: UnsafeRawBufferPointer
        private var isMulti = false
        public private(set) var vertexCount = 0
        public private(set) var boundingBox = BoundingBox.empty

        /// Nil unless the BLOB is of the simple kind and has at most
        /// `maxVertices` vertices.
        public init?(_ bytes: UnsafeRawBufferPointer, maxVertices: Int) {
            guard var view = FlatView(structureOf: bytes, maxVertices: maxVertices), view.checkVertices() else { return nil }
            self = view
        }

        /// The structure checks of `init` alone: a view whose vertices are
        /// still to be checked, by `checkVertices` or by a caller that reads
        /// every vertex anyway and hands its extremes to `accept`. Until then
        /// it must not answer anything (its bounding box is empty).
        init?(structureOf bytes: UnsafeRawBufferPointer, maxVertices: Int) {
            self.bytes = bytes
            #if !_endian(little)
            return nil  // the loads below read little-endian values as they are
            #endif
            let n = bytes.count
            guard n >= 45, bytes[0] == 0, bytes[1] == 1, bytes[38] == 0x7C, bytes[n - 1] == 0xFE else { return nil }
            let srid = bytes.loadUnaligned(fromByteOffset: 2, as: Int32.self)
            guard srid == 4326 || srid == 0 else { return nil }
            let cls = bytes.loadUnaligned(fromByteOffset: 39, as: Int32.self)
            guard cls == 3 || cls == 6 else { return nil }
            isMulti = cls == 6
            var at = 43
            var polygons = 1
            if isMulti {
                guard at + 4 <= n else { return nil }
                polygons = Int(bytes.loadUnaligned(fromByteOffset: at, as: Int32.self))
                at += 4
                // A member takes at least 9 bytes: no loop longer than the BLOB allows.
                guard polygons >= 0, polygons <= (n - at) / 9 else { return nil }
            }
            for _ in 0..<polygons {
                if isMulti {
                    guard at + 5 <= n, bytes[at] == 0x69, bytes.loadUnaligned(fromByteOffset: at + 1, as: Int32.self) == 3 else { return nil }
                    at += 5
                }
                guard at + 4 <= n else { return nil }
                let ringsHere = Int(bytes.loadUnaligned(fromByteOffset: at, as: Int32.self))
                at += 4
                guard ringsHere >= 0, ringsHere <= (n - at) / 4 else { return nil }
                for _ in 0..<ringsHere {
                    guard at + 4 <= n else { return nil }
                    let count = Int(bytes.loadUnaligned(fromByteOffset: at, as: Int32.self))
                    at += 4
                    guard count >= 0, vertexCount + count <= maxVertices, at + 16 * count <= n else { return nil }
                    vertexCount += count
                    at += 16 * count
                }
            }
            // Exactly the end marker after the last ring.
            guard at == n - 1 else { return nil }
        }

        /// Reads every vertex: true, with the bounding box set, when `accept`
        /// takes their extremes.
        mutating func checkVertices() -> Bool {
            var extremes = Extremes()
            let bytes = self.bytes
            forEachRing { at, count in
                // Every vertex is read here, for every row of a join: no
                // branch per vertex, and no overflow checks on offsets that
                // init has bounded.
                var v = at
                let end = at &+ 16 &* count
                while v < end {
                    extremes.add(bytes.loadUnaligned(fromByteOffset: v, as: SIMD2<Double>.self))
                    v = v &+ 16
                }
            }
            return accept(extremes)
        }

        /// decodeAreal's test, on the extremes of every vertex: each finite
        /// and in range; and a cut shape (vertices on both ±180°) needs the
        /// prepared form. Sets the bounding box when it passes.
        mutating func accept(_ e: Extremes) -> Bool {
            let (minX, minY, maxX, maxY) = (e.lo.x, e.lo.y, e.hi.x, e.hi.y)
            let inRange = !(e.sum.x + e.sum.y).isNaN && (vertexCount == 0 || (minX >= -180 && maxX <= 180 && minY >= -90 && maxY <= 90))
            guard inRange, !(minX == -180 && maxX == 180) else { return false }
            boundingBox = BoundingBox(minLon: minX, minLat: minY, maxLon: maxX, maxLat: maxY)
            return true
        }

        /// Extremes and a sum over (lon, lat) pairs, two lanes at a time. A
        /// NaN passes every comparison unseen, so the sum carries it to the end.
        struct Extremes {
            var lo = SIMD2<Double>(repeating: .infinity), hi = SIMD2<Double>(repeating: -.infinity), sum = SIMD2<Double>()

            @inline(__always)
            mutating func add(_ xy: SIMD2<Double>) {
                lo = lo.replacing(with: xy, where: xy .< lo)
                hi = hi.replacing(with: xy, where: xy .> hi)
                sum += xy
            }
        }

        /// Visits each ring as (byte offset of its first vertex, vertex count),
        /// walking the structure `init` has already checked.
        @inline(__always)
        func forEachRing(_ body: (Int, Int) throws -> Void) rethrows {
            func int(_ at: Int) -> Int { Int(bytes.loadUnaligned(fromByteOffset: at, as: Int32.self)) }
            var at = 43
            var polygons = 1
            if isMulti { polygons = int(at); at = at &+ 4 }
            for _ in 0..<polygons {
                if isMulti { at = at &+ 5 }
                let rings = int(at)
                at = at &+ 4
                for _ in 0..<rings {
                    let count = int(at)
                    try body(at &+ 4, count)
                    at = at &+ 4 &+ 16 &* count
                }
            }
        }

        /// Longitude and latitude of the vertex at a byte offset.
        @inline(__always)
        func vertex(at offset: Int) -> (Double, Double) {
            (bytes.loadUnaligned(fromByteOffset: offset, as: Double.self),
             bytes.loadUnaligned(fromByteOffset: offset &+ 8, as: Double.self))
        }
    }
}
