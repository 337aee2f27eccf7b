import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// The mask's outline (issue 39): the port of Training/mask/outline.py's `quad_from_mask` (and its `to_edges`), the
/// reference decision 0096 measured. The grid upsampled 4× bilinearly and thresholded at 0.5; its largest 4-connected
/// region; the largest-area quadrilateral on that region's convex hull; each side refitted to the region's boundary
/// near it; grown to the region (`grown(_:to:)`); scaled to the photo; then, given the photo, each side moved to the
/// photo's own straight edge near it.
extension DocumentMask {
    /// How many upsampled pixels a grid cell is across: sub-cell edges for the hull.
    static let upsampling = 4
    /// The probability above which an upsampled pixel is on the document.
    static let regionThreshold: Float = 0.5
    /// Regions smaller than this (upsampled pixels) have no outline.
    static let minimumRegion = 16
    /// The hull's vertices are subsampled to at most this many before the quadrilateral search (cubic in them).
    static let hullVertices = 64
    /// How far from the mask's side the photo's edge is looked for, in mask cells (of a 128-cell grid).
    static let edgeReachCells = 3.0
    /// How many places along each side the photo's edge is looked for.
    static let edgePlaces = 48
    /// How close (px at the working size) a place must lie to the fitted line to count for it.
    static let edgeTolerance = 1.5
    /// Which share of all places must lie on the fitted line for the side to move.
    static let edgeInliers = 0.5
    /// The photo's long side (px) where its edges are looked for.
    static let edgeLongSide = 1024.0
    /// The steps (upsampled pixels, largest first) by which `grown(_:to:)` moves a corner.
    static let growSteps: [Double] = [8, 4, 2, 1]
    /// At most this many moves are tried in growing an outline.
    static let growTrials = 4096

    /// The document's corners (top left, top right, bottom right, bottom left) in the pixels of a `width` × `height`
    /// photo from its mask `grid`, or nil when the mask holds no region. With the photo itself, each side is moved
    /// to the photo's straight edge within `edgeReachCells` of it (`fittedToEdges(_:photo:)`).
    static func outline(of grid: Grid, width: Int, height: Int, photo: NeuralImage? = nil) -> [Point]? {
        let side = grid.size * upsampling
        return outline(ofUpsampled: MaskRegion.upsampled(grid, to: side), side: side, width: width, height: height,
                       photo: photo)
    }

    /// `outline(of:width:height:photo:)` from the grid already upsampled to `side` × `side` (`MaskRegion.upsampled`).
    static func outline(ofUpsampled values: [Float], side: Int, width: Int, height: Int,
                        photo: NeuralImage? = nil) -> [Point]? {
        guard let region = MaskRegion.largest(in: values, side: side, threshold: regionThreshold),
              region.count >= minimumRegion, let corners = maxAreaQuad(region.hull()) else { return nil }
        let quad = grown(DocumentDetector.ordered(refined(corners, boundary: region.boundary())), to: region)
        let sx = Double(width) / Double(region.side), sy = Double(height) / Double(region.side)
        let scaled = DocumentDetector.ordered(quad.map { Point($0.x * sx, $0.y * sy) })
        guard let photo else { return scaled }
        return DocumentDetector.ordered(fittedToEdges(scaled, photo: photo))
    }

    // MARK: The region's quadrilateral

    /// The largest-area quadrilateral with corners among `hull` (a convex polygon's vertices in order), or nil when
    /// it has fewer than four. Over 64 vertices, 64 evenly spaced ones are searched, from the first: which those are
    /// depends on where the list begins (outline.py's hull begins where qhull happens to begin it, this port's at
    /// the smallest (x, y); on rounded cards outline.py's own outlines differ by up to 15 px over its first vertex).
    static func maxAreaQuad(_ hull: [Point]) -> [Point]? {
        var points = hull
        if points.count > hullVertices {
            let step = Double(points.count) / Double(hullVertices)
            points = (0..<hullVertices).map { hull[Int(Double($0) * step)] }
        }
        let n = points.count
        guard n >= 4 else { return nil }
        func triangle(_ i: Int, _ j: Int, _ k: Int) -> Double {
            let a = points[i], b = points[j], c = points[k]
            return abs(0.5 * ((b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y)))
        }
        func farthest(_ i: Int, _ j: Int, among range: [Int]) -> Int {
            var best = range[0]
            for k in range.dropFirst() where triangle(i, j, k) > triangle(i, j, best) { best = k }
            return best
        }
        var best = -1.0, quad: [Int] = []
        for i in 0..<n {
            for j in stride(from: i + 2, to: n - (i == 0 ? 1 : 0), by: 1) {
                let inside = Array((i + 1)..<j), outside = Array((j + 1)..<n) + Array(0..<i)
                guard !inside.isEmpty, !outside.isEmpty else { continue }
                let k = farthest(i, j, among: inside), m = farthest(i, j, among: outside)
                let area = triangle(i, j, k) + triangle(i, j, m)
                if area > best { (best, quad) = (area, [i, k, j, m]) }
            }
        }
        return quad.map { points[$0] }
    }

    /// Each side refitted by least squares to the boundary points near its middle 80%, the corners where the lines
    /// cross; `quad` itself when a corner would move further than a tenth of the quadrilateral's radius.
    static func refined(_ quad: [Point], boundary: [Point]) -> [Point] {
        var lines: [(point: Point, direction: Point)] = []
        for s in 0..<4 {
            let a = quad[s], d = quad[(s + 1) % 4] - a
            let length = (d.x * d.x + d.y * d.y).squareRoot()
            guard length >= 1e-6 else { return quad }
            let u = d * (1 / length)
            let band = max(2.0, 0.03 * length)
            let near = boundary.filter { p in
                let along = dot(p - a, u), across = dot(p - a, Point(-u.y, u.x))
                return along > 0.1 * length && along < 0.9 * length && abs(across) < band
            }
            lines.append(near.count < 8 ? (a, u) : principalLine(near, along: u))
        }
        var corners: [Point] = []
        for s in 0..<4 {
            let (p, r) = lines[(s + 3) % 4], (q, t) = lines[s]
            corners.append(crossing(p, r, q, t) ?? quad[s])
        }
        let centre = quad.reduce(Point(0, 0), +) * 0.25
        let radius = quad.map { $0.distance(to: centre) }.max() ?? 0
        let moved = zip(corners, quad).map { $0.distance(to: $1) }.max() ?? 0
        return moved > 0.1 * radius ? quad : corners
    }

    /// The total-least-squares line through `points` (`DocumentDetector.principalAxis`: their centre, their
    /// principal direction turned along `u`).
    static func principalLine(_ points: [Point], along u: Point) -> (point: Point, direction: Point) {
        let (centre, angle) = DocumentDetector.principalAxis(of: points)
        let direction = Point(cos(angle), sin(angle))
        return (centre, dot(direction, u) >= 0 ? direction : direction * -1)
    }

    /// Where the line through `p` along `r` meets the one through `q` along `t`, or nil when they are parallel.
    static func crossing(_ p: Point, _ r: Point, _ q: Point, _ t: Point) -> Point? {
        // p + k r = q + l t: the 2 × 2 system [r, −t] (k, l) = q − p, by Cramer's rule.
        let determinant = r.y * t.x - r.x * t.y
        guard abs(determinant) >= 1e-6 else { return nil }
        let d = q - p
        let k = (d.y * t.x - d.x * t.y) / determinant
        return p + r * k
    }

    static func dot(_ a: Point, _ b: Point) -> Double { a.x * b.x + a.y * b.y }

    // MARK: Growing it to the region (decision 0101)

    /// `quad` (upsampled grid coordinates, top left first, clockwise) grown to `region`: the hull's largest
    /// quadrilateral lies inside the region, so where the mask rounds a corner off or misses a strip along a side it
    /// cuts that much of the document off. Each corner in turn is moved by a step right, left, down or up (the steps
    /// of `growSteps`, largest first); a move is kept when the quadrilateral stays convex, its area does not shrink,
    /// and its IoU with the region (pixels by their centres, `MaskRegion.covered(by:)`) rises, until none does.
    /// Growing only: a fit free to shrink gives up the parts of the document the mask missed to leave out the desk
    /// it marked. outline.py's `grown`, move for move.
    static func grown(_ quad: [Point], to region: MaskRegion) -> [Point] {
        guard quad.count == 4, quad.allSatisfy({ $0.x.isFinite && $0.y.isFinite }) else { return quad }
        func iou(_ q: [Point]) -> Double {
            let (inside, common) = region.covered(by: q)
            return Double(common) / Double(max(1, inside + region.count - common))
        }
        var quad = quad, best = iou(quad), trials = 0
        for step in growSteps {
            var improved = true
            while improved && trials < growTrials {
                improved = false
                for k in 0..<4 {
                    for move in [Point(step, 0), Point(-step, 0), Point(0, step), Point(0, -step)] {
                        var trial = quad
                        trial[k] = trial[k] + move
                        guard Quad(trial).isConvex, Quad(trial).area >= Quad(quad).area else { continue }
                        let value = iou(trial)
                        trials += 1
                        if value > best + 1e-9 { (best, quad, improved) = (value, trial, true) }
                    }
                }
            }
        }
        return quad
    }

}

/// The largest 4-connected region of a document mask upsampled bilinearly and thresholded: a square of `side` ×
/// `side` pixels, `upsampling` to a grid cell.
struct MaskRegion {
    let side: Int
    /// Row by row, whether each pixel is in the region.
    let inside: [Bool]
    let count: Int
    /// Row by row, how many of the row's first 0...side pixels are in the region (side + 1 counts a row).
    let counted: [Int32]

    init(side: Int, inside: [Bool], count: Int) {
        (self.side, self.inside, self.count) = (side, inside, count)
        var counted = [Int32](repeating: 0, count: side * (side + 1))
        for y in 0..<side {
            var sum: Int32 = 0
            for x in 0..<side {
                if inside[y * side + x] { sum += 1 }
                counted[y * (side + 1) + x + 1] = sum
            }
        }
        self.counted = counted
    }

    /// The region of a grid upsampled to `side` × `side` values (`upsampled(_:to:)`, row by row) above `threshold`,
    /// or nil when no pixel is; the first in raster order of equally large ones.
    static func largest(in values: [Float], side: Int, threshold: Float) -> MaskRegion? {
        var label = [Int32](repeating: 0, count: side * side)
        var best: (label: Int32, count: Int) = (0, 0), next: Int32 = 0
        var stack: [Int] = []
        for seed in 0..<(side * side) where values[seed] > threshold && label[seed] == 0 {
            next += 1
            label[seed] = next
            stack.append(seed)
            var count = 0
            while let index = stack.popLast() {
                count += 1
                let x = index % side, y = index / side
                for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)]
                    where nx >= 0 && ny >= 0 && nx < side && ny < side {
                    let neighbour = ny * side + nx
                    if values[neighbour] > threshold && label[neighbour] == 0 {
                        label[neighbour] = next
                        stack.append(neighbour)
                    }
                }
            }
            if count > best.count { best = (next, count) }
        }
        guard best.count > 0 else { return nil }
        return MaskRegion(side: side, inside: label.map { $0 == best.label }, count: best.count)
    }

    /// The grid resized to `side` × `side` as Pillow resizes a mode "F" image with BILINEAR: horizontal pass then
    /// vertical, double-precision sums stored as 32-bit floats.
    static func upsampled(_ grid: DocumentMask.Grid, to side: Int) -> [Float] {
        // Each output sample's taps, flat (index loops over buffers: the tests' debug build is slow at iterators).
        let taps = DocumentMask.filterTaps(from: grid.size, to: side)
        let first = taps.map(\.0), start = taps.reduce(into: [0]) { $0.append($0.last! + $1.1.count) }
        let weights = taps.flatMap(\.1)
        let size = grid.size
        precondition(grid.values.count >= size * size, "a \(size) × \(size) grid of \(grid.values.count) values")
        var across = [Float](repeating: 0, count: side * size)
        var out = [Float](repeating: 0, count: side * side)
        grid.values.withUnsafeBufferPointer { values in
            across.withUnsafeMutableBufferPointer { across in
                for y in 0..<size {
                    for x in 0..<side {
                        var sum = 0.0
                        for k in 0..<(start[x + 1] - start[x]) {
                            sum += Double(values[y * size + first[x] + k]) * weights[start[x] + k]
                        }
                        across[y * side + x] = Float(sum)
                    }
                }
            }
        }
        across.withUnsafeBufferPointer { across in
            out.withUnsafeMutableBufferPointer { out in
                for y in 0..<side {
                    for x in 0..<side {
                        var sum = 0.0
                        for k in 0..<(start[y + 1] - start[y]) {
                            sum += Double(across[(first[y] + k) * side + x]) * weights[start[y] + k]
                        }
                        out[y * side + x] = Float(sum)
                    }
                }
            }
        }
        return out
    }

    /// How many pixels of the square have their centre in the convex quadrilateral `quad` (grid coordinates), and
    /// how many of those are in the region: row by row, the columns between where the row's centre line crosses the
    /// quadrilateral's sides (outline.py's `quad_spans`).
    func covered(by quad: [Point]) -> (inside: Int, common: Int) {
        var inside = 0, common = 0
        let top = max(0, Int((quad.map(\.y).min()! - 0.5).rounded(.down)))
        let bottom = min(side - 1, Int((quad.map(\.y).max()! - 0.5).rounded(.up)))
        guard top <= bottom else { return (0, 0) }
        for y in top...bottom {
            let centre = Double(y) + 0.5
            var low = Double.infinity, high = -Double.infinity
            for s in 0..<4 {
                let a = quad[s], b = quad[(s + 1) % 4]
                guard a.y != b.y, centre >= min(a.y, b.y), centre <= max(a.y, b.y) else { continue }
                let x = a.x + (centre - a.y) * (b.x - a.x) / (b.y - a.y)
                (low, high) = (min(low, x), max(high, x))
            }
            guard low.isFinite else { continue }
            let first = Int(min(max((low - 0.5).rounded(.up), 0), Double(side)))
            let last = max(first, Int(min(max((high - 0.5).rounded(.down) + 1, 0), Double(side))))
            inside += last - first
            common += Int(counted[y * (side + 1) + last] - counted[y * (side + 1) + first])
        }
        return (inside, common)
    }

    func contains(_ x: Int, _ y: Int) -> Bool { x >= 0 && y >= 0 && x < side && y < side && inside[y * side + x] }

    /// The convex hull of the region's pixel centres, counter-clockwise in x, y as qhull's (`RotatedRect.convexHull`,
    /// the neural detector's: Andrew's monotone chain, no collinear vertices), beginning at the smallest (x, y). Only
    /// each row's two ends can be vertices.
    func hull() -> [Point] {
        var ends: [Point] = []
        for y in 0..<side {
            guard let first = (0..<side).first(where: { contains($0, y) }),
                  let last = (0..<side).last(where: { contains($0, y) }) else { continue }
            ends.append(Point(Double(first) + 0.5, Double(y) + 0.5))
            if last != first { ends.append(Point(Double(last) + 0.5, Double(y) + 0.5)) }
        }
        return RotatedRect.convexHull(ends)
    }

    /// The centres of the region's pixels with a 4-neighbour outside it (or beyond the square): what is left after
    /// a binary erosion by the cross.
    func boundary() -> [Point] {
        var points: [Point] = []
        for y in 0..<side {
            for x in 0..<side where inside[y * side + x] {
                if !(contains(x - 1, y) && contains(x + 1, y) && contains(x, y - 1) && contains(x, y + 1)) {
                    points.append(Point(Double(x) + 0.5, Double(y) + 0.5))
                }
            }
        }
        return points
    }
}
