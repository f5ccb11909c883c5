/// The exact side of a line on which a point lies, for the containment test:
/// whether a point is on an edge, or which side of it, must not depend on
/// rounding, or a point placed exactly on a boundary comes out inside or
/// outside by the edge's direction.
///
/// How: the determinant (a − c) × (b − c) in floating point, with Shewchuk's
/// error bound for it (Adaptive Precision Floating-Point Arithmetic and Fast
/// Robust Geometric Predicates, 1997): beyond the bound its sign is right.
/// Within it (a point on or within ~1e-14° of the line: rare) the
/// determinant is summed exactly as a floating-point expansion: each
/// difference split into its rounded value and its error (two-sum), each
/// product into its rounded value and its error (a fused multiply-add), and
/// the sixteen exact terms added without loss (grow-expansion), whose
/// largest nonzero component has the sign of the sum. Exact as long as no
/// product of two coordinate differences falls below ~1e-290 (a nonzero
/// difference under ~1e-145°, far below any coordinate's own precision).
enum Orientation {
    /// Shewchuk's ccwerrboundA: (3 + 16ε)ε with ε = 2⁻⁵³.
    static let errorBound = (3.0 + 16.0 * 0x1p-53) * 0x1p-53

    /// +1 when c lies to the left of the line from a to b, −1 to the right,
    /// 0 on it (exactly).
    @inline(__always)
    static func sign(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double, _ cx: Double, _ cy: Double) -> Int {
        let left = (ax - cx) * (by - cy)
        let right = (ay - cy) * (bx - cx)
        let det = left - right
        let bound = errorBound * (abs(left) + abs(right))
        if det > bound { return 1 }
        if -det > bound { return -1 }
        return exactSign(ax, ay, bx, by, cx, cy)
    }

    @inline(never)
    static func exactSign(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double, _ cx: Double, _ cy: Double) -> Int {
        let acx = twoSum(ax, -cx), bcy = twoSum(by, -cy)
        let acy = twoSum(ay, -cy), bcx = twoSum(bx, -cx)
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: 16) { e -> Int in
            var n = 0
            func add(_ b: Double) {
                // Grow-expansion: e stays nonoverlapping, in increasing magnitude.
                var q = b
                for i in 0..<n {
                    let (s, err) = twoSum(q, e[i])
                    e[i] = err
                    q = s
                }
                e[n] = q
                n += 1
            }
            func addProduct(_ x: Double, _ y: Double, negated: Bool) {
                let p = x * y
                let err = (-p).addingProduct(x, y)
                add(negated ? -p : p)
                add(negated ? -err : err)
            }
            addProduct(acx.0, bcy.0, negated: false); addProduct(acx.0, bcy.1, negated: false)
            addProduct(acx.1, bcy.0, negated: false); addProduct(acx.1, bcy.1, negated: false)
            addProduct(acy.0, bcx.0, negated: true); addProduct(acy.0, bcx.1, negated: true)
            addProduct(acy.1, bcx.0, negated: true); addProduct(acy.1, bcx.1, negated: true)
            for i in stride(from: n - 1, through: 0, by: -1) where e[i] != 0 { return e[i] > 0 ? 1 : -1 }
            return 0
        }
    }

    /// a + b as its rounded value and the exact error of that rounding.
    @inline(__always)
    static func twoSum(_ a: Double, _ b: Double) -> (Double, Double) {
        let s = a + b
        let bv = s - a
        let av = s - bv
        return (s, (a - av) + (b - bv))
    }
}
