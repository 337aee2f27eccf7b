/// A point in pixels (x right, y down).
public struct Point: Sendable, Equatable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    @inlinable
    public init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }

    public static func + (a: Point, b: Point) -> Point { Point(a.x + b.x, a.y + b.y) }
    public static func - (a: Point, b: Point) -> Point { Point(a.x - b.x, a.y - b.y) }
    public static func * (a: Point, s: Double) -> Point { Point(a.x * s, a.y * s) }
    public func distance(to other: Point) -> Double { ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot() }
    public var description: String { "(\(Format.fixed(x, 1)), \(Format.fixed(y, 1)))" }
    public var json: JSON { [.rounded(x, places: 1), .rounded(y, places: 1)] }
}

/// A quadrilateral: corners in the order top left, top right, bottom right, bottom left.
public struct Quad: Sendable, Equatable {
    public var corners: [Point]

    public init(_ corners: [Point]) {
        precondition(corners.count == 4, "a quadrilateral has four corners")
        self.corners = corners
    }

    public init(width: Double, height: Double) {
        self.init([Point(0, 0), Point(width, 0), Point(width, height), Point(0, height)])
    }

    public var topLeft: Point { corners[0] }
    public var topRight: Point { corners[1] }
    public var bottomRight: Point { corners[2] }
    public var bottomLeft: Point { corners[3] }

    /// Area by the shoelace formula (positive for a simple quadrilateral in either orientation).
    public var area: Double { Polygon.area(corners) }

    /// Intersection over union with another quadrilateral (both convex).
    public func iou(with other: Quad) -> Double {
        let intersection = Polygon.area(Polygon.clip(corners, to: other.corners))
        let union = area + other.area - intersection
        return union > 0 ? intersection / union : 0
    }

    /// Intersection over union with another quadrilateral (both convex), both clipped to the `width` × `height`
    /// frame first: only what a photo shows of either counts (as Scripts/bench/benchlib.py's `quad_iou_in_frame`).
    public func iou(with other: Quad, inFrameWidth width: Double, height: Double) -> Double {
        let frame = Quad(width: width, height: height).corners
        let ours = Polygon.clip(corners, to: frame), theirs = Polygon.clip(other.corners, to: frame)
        guard ours.count >= 3, theirs.count >= 3 else { return 0 }
        let intersection = Polygon.area(Polygon.clip(ours, to: theirs))
        let union = Polygon.area(ours) + Polygon.area(theirs) - intersection
        return union > 0 ? intersection / union : 0
    }

    /// True when all four turns have the same sign (no reflex corner, not self-crossing).
    public var isConvex: Bool {
        var sign = 0.0
        for i in 0..<4 {
            let a = corners[i], b = corners[(i + 1) % 4], c = corners[(i + 2) % 4]
            let cross = (b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x)
            if cross == 0 { return false }
            if sign == 0 { sign = cross } else if (cross > 0) != (sign > 0) { return false }
        }
        return true
    }

    public var json: JSON { .array(corners.map(\.json)) }

    /// Corners divided by the image size, so they lie in 0…1.
    public func normalized(width: Double, height: Double) -> Quad {
        Quad(corners.map { Point($0.x / width, $0.y / height) })
    }
}

enum Polygon {
    static func area(_ points: [Point]) -> Double {
        guard points.count >= 3 else { return 0 }
        var sum = 0.0
        for i in points.indices {
            let a = points[i], b = points[(i + 1) % points.count]
            sum += a.x * b.y - b.x * a.y
        }
        return abs(sum) / 2
    }

    /// Sutherland–Hodgman: `subject` clipped to the convex polygon `clip`.
    static func clip(_ subject: [Point], to clip: [Point]) -> [Point] {
        var output = subject
        let orientation = signedArea(clip) >= 0 ? 1.0 : -1.0
        for i in clip.indices {
            let a = clip[i], b = clip[(i + 1) % clip.count]
            let input = output
            output = []
            guard !input.isEmpty else { break }
            func inside(_ p: Point) -> Bool { orientation * ((b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)) >= 0 }
            func intersection(_ p: Point, _ q: Point) -> Point {
                let d1 = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
                let d2 = (b.x - a.x) * (q.y - a.y) - (b.y - a.y) * (q.x - a.x)
                let t = d1 / (d1 - d2)
                return Point(p.x + (q.x - p.x) * t, p.y + (q.y - p.y) * t)
            }
            for j in input.indices {
                let current = input[j], previous = input[(j + input.count - 1) % input.count]
                if inside(current) {
                    if !inside(previous) { output.append(intersection(previous, current)) }
                    output.append(current)
                } else if inside(previous) {
                    output.append(intersection(previous, current))
                }
            }
        }
        return output
    }

    static func signedArea(_ points: [Point]) -> Double {
        var sum = 0.0
        for i in points.indices {
            let a = points[i], b = points[(i + 1) % points.count]
            sum += a.x * b.y - b.x * a.y
        }
        return sum / 2
    }
}

/// A projective transform of the plane (3×3 matrix, row-major, acting on column vectors [x, y, 1]).
public struct Homography: Sendable, Equatable {
    public var m: [Double]

    public init(_ m: [Double]) {
        precondition(m.count == 9)
        self.m = m
    }

    public static let identity = Homography([1, 0, 0, 0, 1, 0, 0, 0, 1])

    /// The transform that takes each of `source`'s four points to the matching one of `destination`.
    public static func mapping(from source: [Point], to destination: [Point]) -> Homography? {
        guard source.count == 4, destination.count == 4 else { return nil }
        var a = [[Double]](repeating: [Double](repeating: 0, count: 9), count: 8)
        for i in 0..<4 {
            let (x, y) = (source[i].x, source[i].y)
            let (u, v) = (destination[i].x, destination[i].y)
            a[2 * i] = [x, y, 1, 0, 0, 0, -u * x, -u * y, u]
            a[2 * i + 1] = [0, 0, 0, x, y, 1, -v * x, -v * y, v]
        }
        guard let h = solve(a) else { return nil }
        return Homography(h + [1])
    }

    public static func translation(_ dx: Double, _ dy: Double) -> Homography { Homography([1, 0, dx, 0, 1, dy, 0, 0, 1]) }
    public static func scale(_ sx: Double, _ sy: Double) -> Homography { Homography([sx, 0, 0, 0, sy, 0, 0, 0, 1]) }

    /// Rotation by `radians` clockwise on screen (y down) about the origin.
    public static func rotation(_ radians: Double) -> Homography {
        let c = cosine(radians), s = sine(radians)
        return Homography([c, -s, 0, s, c, 0, 0, 0, 1])
    }

    @inlinable
    public func apply(_ p: Point) -> Point {
        let w = m[6] * p.x + m[7] * p.y + m[8]
        return Point((m[0] * p.x + m[1] * p.y + m[2]) / w, (m[3] * p.x + m[4] * p.y + m[5]) / w)
    }

    /// First `self`, then `next`.
    public func then(_ next: Homography) -> Homography {
        var r = [Double](repeating: 0, count: 9)
        for i in 0..<3 {
            for j in 0..<3 {
                r[i * 3 + j] = (0..<3).reduce(0) { $0 + next.m[i * 3 + $1] * m[$1 * 3 + j] }
            }
        }
        return Homography(r)
    }

    public var inverse: Homography? {
        let a = m
        let det = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6])
        guard abs(det) > 1e-12 else { return nil }
        let inv = [
            a[4] * a[8] - a[5] * a[7], a[2] * a[7] - a[1] * a[8], a[1] * a[5] - a[2] * a[4],
            a[5] * a[6] - a[3] * a[8], a[0] * a[8] - a[2] * a[6], a[2] * a[3] - a[0] * a[5],
            a[3] * a[7] - a[4] * a[6], a[1] * a[6] - a[0] * a[7], a[0] * a[4] - a[1] * a[3],
        ]
        return Homography(inv.map { $0 / det })
    }

    public var json: JSON { .array(m.map { .rounded($0, places: 9) }) }

    /// Gaussian elimination with partial pivoting on an n × (n+1) augmented matrix.
    static func solve(_ matrix: [[Double]]) -> [Double]? {
        var a = matrix
        let n = a.count
        for col in 0..<n {
            guard let pivot = (col..<n).max(by: { abs(a[$0][col]) < abs(a[$1][col]) }), abs(a[pivot][col]) > 1e-12 else { return nil }
            a.swapAt(col, pivot)
            for row in 0..<n where row != col {
                let factor = a[row][col] / a[col][col]
                if factor != 0 { for k in col...n { a[row][k] -= factor * a[col][k] } }
            }
        }
        return (0..<n).map { a[$0][n] / a[$0][$0] }
    }
}

// Foundation-free trigonometry through Glibc.
#if canImport(Glibc)
import Glibc
@inline(__always) func cosine(_ x: Double) -> Double { cos(x) }
@inline(__always) func sine(_ x: Double) -> Double { sin(x) }
#endif
