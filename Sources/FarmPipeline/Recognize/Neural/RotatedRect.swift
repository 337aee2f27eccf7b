import FarmCore

/// A rectangle at any angle, given by its four corners in order around it. What the text detector makes of a
/// region of its probability map: the smallest rectangle holding the region's pixels (as OpenCV's
/// `minAreaRect`).
struct RotatedRect: Sendable, Equatable {
    /// The corners, consecutive around the rectangle.
    let corners: [Point]

    /// The lengths of its two sides.
    var sides: (Double, Double) { (corners[0].distance(to: corners[1]), corners[1].distance(to: corners[2])) }
    var shortSide: Double { min(sides.0, sides.1) }
    var area: Double { sides.0 * sides.1 }
    var perimeter: Double { 2 * (sides.0 + sides.1) }

    /// The corners as top left, top right, bottom right, bottom left, chosen as the reference pipeline does
    /// (`get_mini_boxes`): of the two leftmost corners the upper is the top left, of the two rightmost the upper is
    /// the top right.
    var orderedCorners: [Point] {
        let byX = corners.enumerated().sorted { ($0.element.x, $0.offset) < ($1.element.x, $1.offset) }.map(\.element)
        let (topLeft, bottomLeft) = byX[1].y > byX[0].y ? (byX[0], byX[1]) : (byX[1], byX[0])
        let (topRight, bottomRight) = byX[3].y > byX[2].y ? (byX[2], byX[3]) : (byX[3], byX[2])
        return [topLeft, topRight, bottomRight, bottomLeft]
    }

    /// The smallest-area rectangle holding all of `points`, by rotating calipers over their convex hull: the
    /// smallest rectangle has a side on one of the hull's edges. Nil when there are no points; a single point or a
    /// line of points gives a rectangle with a side of length zero.
    static func minimumArea(enclosing points: [Point]) -> RotatedRect? {
        let hull = convexHull(points)
        guard let first = hull.first else { return nil }
        if hull.count == 1 { return RotatedRect(corners: [first, first, first, first]) }
        if hull.count == 2 { return RotatedRect(corners: [hull[0], hull[1], hull[1], hull[0]]) }
        let n = hull.count
        func dot(_ a: Point, _ b: Point) -> Double { a.x * b.x + a.y * b.y }
        func cross(_ a: Point, _ b: Point) -> Double { a.x * b.y - a.y * b.x }
        var best: (area: Double, corners: [Point])?
        // The calipers: the hull vertices farthest along the edge (right), farthest from it (top) and farthest
        // back along it (left). Each only moves forward as the edge turns, so the whole sweep is linear.
        var right = 0, top = 0, left = 0
        for i in 0..<n {
            let a = hull[i], b = hull[(i + 1) % n]
            let length = a.distance(to: b)
            guard length > 0 else { continue }
            let u = Point((b.x - a.x) / length, (b.y - a.y) / length)
            if i == 0 { right = 1; top = 1 }
            while dot(hull[(right + 1) % n] - a, u) >= dot(hull[right] - a, u) - 1e-12, (right + 1) % n != i {
                right = (right + 1) % n
            }
            if i == 0 { top = right }
            while abs(cross(u, hull[(top + 1) % n] - a)) >= abs(cross(u, hull[top] - a)) - 1e-12, (top + 1) % n != i {
                top = (top + 1) % n
            }
            if i == 0 { left = top }
            while dot(hull[(left + 1) % n] - a, u) <= dot(hull[left] - a, u) + 1e-12, (left + 1) % n != (i + 1) % n {
                left = (left + 1) % n
            }
            let minAlong = dot(hull[left] - a, u), maxAlong = dot(hull[right] - a, u)
            let normal = Point(-u.y, u.x)
            let height = dot(hull[top] - a, normal)
            let area = (maxAlong - minAlong) * abs(height)
            if best == nil || area < best!.area - 1e-9 {
                let corners = [a + u * minAlong, a + u * maxAlong, a + u * maxAlong + normal * height, a + u * minAlong + normal * height]
                best = (area, corners)
            }
        }
        return best.map { RotatedRect(corners: $0.corners) }
    }

    /// The convex hull of `points` (Andrew's monotone chain), counter-clockwise in y-up terms, without collinear
    /// points.
    static func convexHull(_ points: [Point]) -> [Point] {
        let sorted = points.sorted { ($0.x, $0.y) < ($1.x, $1.y) }
        var unique: [Point] = []
        for point in sorted where unique.last != point { unique.append(point) }
        guard unique.count > 2 else { return unique }
        func turn(_ o: Point, _ a: Point, _ b: Point) -> Double { (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x) }
        var lower: [Point] = []
        for point in unique {
            while lower.count >= 2, turn(lower[lower.count - 2], lower[lower.count - 1], point) <= 0 { lower.removeLast() }
            lower.append(point)
        }
        var upper: [Point] = []
        for point in unique.reversed() {
            while upper.count >= 2, turn(upper[upper.count - 2], upper[upper.count - 1], point) <= 0 { upper.removeLast() }
            upper.append(point)
        }
        return Array(lower.dropLast() + upper.dropLast())
    }
}
