import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// Growing a convex polygon outwards by a distance with round corners (Clipper's `JT_ROUND` offset of a closed
/// polygon): how the text detector widens a shrunken text region back to the text's full extent ("unclip").
enum PolygonOffset {
    /// The reference pipeline's unclip distance: area × ratio / perimeter (DB's shrink ratio undone).
    static func unclipDistance(area: Double, perimeter: Double, ratio: Double) -> Double {
        perimeter > 0 ? area * ratio / perimeter : 0
    }

    /// The outline of `polygon` (convex, either orientation) moved outwards by `distance`: every edge shifted
    /// along its outer normal, the corners joined by arcs of `distance` radius drawn with steps of at most
    /// `maxStep` radians.
    static func rounded(_ polygon: [Point], by distance: Double, maxStep: Double = .pi / 16) -> [Point] {
        let n = polygon.count
        guard n >= 3, distance > 0 else { return polygon }
        var signed = 0.0
        for i in 0..<n {
            let a = polygon[i], b = polygon[(i + 1) % n]
            signed += a.x * b.y - b.x * a.y
        }
        // With a positive signed area the interior is to the left of each edge (x right, y down: clockwise on
        // screen), so the outer normal of edge (dx, dy) is (dy, −dx); the other way round otherwise.
        let outward = signed > 0 ? 1.0 : -1.0
        func normal(_ i: Int) -> Point? {
            let a = polygon[i], b = polygon[(i + 1) % n]
            let length = a.distance(to: b)
            guard length > 0 else { return nil }
            return Point(outward * (b.y - a.y) / length, -outward * (b.x - a.x) / length)
        }
        let normals = (0..<n).map(normal)
        var outline: [Point] = []
        for i in 0..<n {
            // A zero-length edge has no normal: its neighbour's stands in.
            guard let incoming = normals[(i + n - 1) % n] ?? normals[i] else { continue }
            let outgoing = normals[i] ?? incoming
            let corner = polygon[i]
            // The arc from the incoming edge's normal to the outgoing one's, turning the short way.
            let start = atan2Angle(incoming), end = atan2Angle(outgoing)
            var sweep = end - start
            while sweep > .pi { sweep -= 2 * .pi }
            while sweep < -.pi { sweep += 2 * .pi }
            let steps = max(1, Int((abs(sweep) / maxStep).rounded(.up)))
            for step in 0...steps {
                let angle = start + sweep * Double(step) / Double(steps)
                outline.append(Point(corner.x + distance * cos(angle), corner.y + distance * sin(angle)))
            }
        }
        return outline
    }

    private static func atan2Angle(_ p: Point) -> Double { atan2(p.y, p.x) }
}
