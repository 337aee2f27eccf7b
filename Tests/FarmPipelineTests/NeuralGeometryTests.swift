import Testing
import FarmCore
@testable import FarmPipeline
#if canImport(Glibc)
import Glibc
#endif

/// The detector's pure geometry on made-up maps: smallest rotated rectangles, the unclip offset, components and
/// the DB post-processing.
@Suite("Neural detector geometry")
struct NeuralGeometryTests {
    /// The pixel centres inside a `width` × `height` rectangle centred at `centre`, turned by `degrees`.
    static func rotatedRectanglePixels(centre: Point, width: Double, height: Double, degrees: Double) -> [Point] {
        let angle = degrees * .pi / 180
        let c = cos(angle), s = sin(angle)
        var points: [Point] = []
        let reach = Int((width + height).rounded(.up))
        for y in Int(centre.y) - reach...Int(centre.y) + reach {
            for x in Int(centre.x) - reach...Int(centre.x) + reach {
                let dx = Double(x) - centre.x, dy = Double(y) - centre.y
                let u = dx * c + dy * s, v = -dx * s + dy * c
                if abs(u) <= width / 2, abs(v) <= height / 2 { points.append(Point(Double(x), Double(y))) }
            }
        }
        return points
    }

    /// The smallest-area rectangle by trying every hull edge against every hull vertex (quadratic, for checking).
    static func bruteForceArea(_ points: [Point]) -> Double {
        let hull = RotatedRect.convexHull(points)
        var best = Double.infinity
        for i in hull.indices {
            let a = hull[i], b = hull[(i + 1) % hull.count]
            let length = a.distance(to: b)
            guard length > 0 else { continue }
            let u = Point((b.x - a.x) / length, (b.y - a.y) / length)
            let along = hull.map { ($0.x - a.x) * u.x + ($0.y - a.y) * u.y }
            let across = hull.map { -($0.x - a.x) * u.y + ($0.y - a.y) * u.x }
            best = min(best, (along.max()! - along.min()!) * (across.max()! - across.min()!))
        }
        return best
    }

    @Test("the detector's input: the reference's sizing, shrunk only where large print would be over 14 px in it")
    func inputSize() {
        let sizing = TextDetector.Sizing()
        // A narrow receipt (463 × 1013) is enlarged to a short side of 736 by the reference's sizing.
        let reference = sizing.plan(width: 463, height: 1013)
        #expect(reference.inputWidth == 736 && reference.inputHeight == 1600)
        #expect(sizing.plan(width: 463, height: 1013, xHeight: nil) == reference)
        // Body text 8 px on the page is 12.7 px in that input: kept.
        #expect(sizing.plan(width: 463, height: 1013, xHeight: 8) == reference)
        // A table crop's 6 px print enlarged to 26 px: small print is never shrunk.
        #expect(sizing.plan(width: 200, height: 120, xHeight: 6) == sizing.plan(width: 200, height: 120))
        // Body text 12 px is 19 px there: the input shrinks to bring it to 14 px, in multiples of 32, while the
        // page's own geometry (what the map's points are scaled back by) stays.
        let shrunk = sizing.plan(width: 463, height: 1013, xHeight: 12)
        #expect(shrunk.inputWidth == 544 && shrunk.inputHeight == 1184, "\(shrunk)")
        #expect(shrunk.resizedWidth == reference.resizedWidth && shrunk.scaleX == reference.scaleX)
        // A paper page's 12 px body, 11 px after the reference's shrink to a long side of 2000: kept.
        #expect(sizing.plan(width: 1700, height: 2200, xHeight: 12) == sizing.plan(width: 1700, height: 2200))
        // Large print is never shrunk below 32 px a side.
        let poster = sizing.plan(width: 300, height: 60, xHeight: 50)
        #expect(poster.inputWidth >= 32 && poster.inputHeight >= 32)
    }

    /// A white gray page with dark blocks at `blocks` (x, y, width, height).
    static func page(width: Int, height: Int, level: UInt8 = 250, blocks: [(Int, Int, Int, Int)]) -> NeuralImage {
        var samples = [UInt8](repeating: level, count: width * height)
        for (x, y, w, h) in blocks {
            for row in y..<(y + h) { for column in x..<(x + w) { samples[row * width + column] = 30 } }
        }
        return NeuralImage(width: width, height: height, planes: [samples])
    }

    @Test("the detector reads the window round a page's ink at the whole page's scale, and the whole page when that saves little")
    func inkWindow() throws {
        let sizing = TextDetector.Sizing()
        // A 2480 × 3508 page (its input 1408 × 1984) whose text fills a block in the middle, a rule of one row lower.
        let page = Self.page(width: 2480, height: 3508, blocks: [(600, 900, 1200, 1500), (700, 2402, 300, 1)])
        let plan = sizing.plan(width: 2480, height: 3508)
        let window = try #require(InkWindow(page, plan: plan))
        let scale = plan.inputScale
        // The ink (600...1799 × 900...2402; looked for on every second row, a row found stands for the next too)
        // with 48 input pixels round it.
        let margin = (x: Int((48 / scale.x).rounded(.up)), y: Int((48 / scale.y).rounded(.up)))
        #expect(window == InkWindow(x: 600 - margin.x, y: 900 - margin.y, width: 1200 + 2 * margin.x,
                                    height: 2403 - 900 + 1 + 2 * margin.y), "\(window)")
        let windowPlan = window.plan(for: plan)
        #expect(abs(windowPlan.inputScale.x - scale.x) < 0.02 && abs(windowPlan.inputScale.y - scale.y) < 0.02)
        #expect(windowPlan.inputPixels < plan.inputPixels / 2 && windowPlan.padding == 0)
        // What the window finds is put back where it lies on the page.
        let region = TextRegion(corners: [Point(0, 0), Point(10, 0), Point(10, 5), Point(0, 5)], score: 0.9)
        #expect(window.onPage(region).corners[2] == Point(Double(window.x + 10), Double(window.y + 5)))
        let cropped = page.cropped(to: window)
        #expect(cropped.width == window.width && cropped.height == window.height)
        #expect(cropped.sample(0, 600 - window.x, 900 - window.y) == 30 && cropped.sample(0, 0, 0) == 250)
        // Ink nearly edge to edge, no ink at all, and a line-shaped page (padded by the plan): the whole page.
        #expect(InkWindow(Self.page(width: 2480, height: 3508, blocks: [(100, 100, 2280, 3300)]), plan: plan) == nil)
        #expect(InkWindow(Self.page(width: 2480, height: 3508, blocks: []), plan: plan) == nil)
        let line = Self.page(width: 1600, height: 60, blocks: [(100, 20, 600, 20)])
        #expect(InkWindow(line, plan: sizing.plan(width: 1600, height: 60)) == nil)
        // A gray page (a photo's paper at 180): ink is what is darker than its own paper.
        let gray = try #require(InkWindow(Self.page(width: 2480, height: 3508, level: 180, blocks: [(600, 900, 1200, 1500)]), plan: plan))
        #expect(gray.x == 600 - margin.x && gray.y == 900 - margin.y)
    }

    @Test("the smallest rectangle of a rotated rectangle's pixels has its angle and size",
          arguments: [0.0, 7.5, 30, 45, 63, 90, 121, 170])
    func minimumAreaOfRotatedRectangle(degrees: Double) throws {
        let pixels = Self.rotatedRectanglePixels(centre: Point(200, 150), width: 120, height: 30, degrees: degrees)
        let rect = try #require(RotatedRect.minimumArea(enclosing: pixels))
        let (a, b) = rect.sides
        // The pixel centres reach within a pixel of the true edges.
        #expect(abs(max(a, b) - 120) < 2.5)
        #expect(abs(min(a, b) - 30) < 2.5)
        let longEdge = a >= b ? (rect.corners[0], rect.corners[1]) : (rect.corners[1], rect.corners[2])
        var found = atan2(longEdge.1.y - longEdge.0.y, longEdge.1.x - longEdge.0.x) * 180 / .pi
        found = (found + 360).truncatingRemainder(dividingBy: 180)
        let expected = degrees.truncatingRemainder(dividingBy: 180)
        let difference = min(abs(found - expected), 180 - abs(found - expected))
        #expect(difference < 2.5, "angle \(found) for \(degrees)")
        #expect(abs(rect.area - Self.bruteForceArea(pixels)) < 1e-6)
        // Every pixel lies inside (or on) the rectangle.
        #expect(pixels.allSatisfy { ProbabilityMap.contains(rect.corners, $0) || Self.distanceOutside(rect.corners, $0) < 1e-6 })
    }

    /// How far `point` lies outside the convex polygon (0 inside).
    static func distanceOutside(_ polygon: [Point], _ point: Point) -> Double {
        var worst = 0.0
        let signed = zip(polygon, polygon.dropFirst() + [polygon[0]]).map { $0.x * $1.y - $1.x * $0.y }.reduce(0, +)
        for i in polygon.indices {
            let a = polygon[i], b = polygon[(i + 1) % polygon.count]
            let length = a.distance(to: b)
            guard length > 0 else { continue }
            let cross = ((b.x - a.x) * (point.y - a.y) - (b.y - a.y) * (point.x - a.x)) / length
            worst = max(worst, signed > 0 ? -cross : cross)
        }
        return worst
    }

    @Test("rotating calipers agree with trying every edge on scattered points")
    func calipersMatchBruteForce() throws {
        var seed: UInt64 = 12345
        func next() -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Double(seed >> 33) / Double(1 << 31)
        }
        for _ in 0..<200 {
            let count = 3 + Int(next() * 40)
            let points = (0..<count).map { _ in Point((next() * 100).rounded(), (next() * 60).rounded()) }
            let rect = try #require(RotatedRect.minimumArea(enclosing: points))
            #expect(abs(rect.area - Self.bruteForceArea(points)) < 1e-6 * max(1, rect.area))
        }
    }

    @Test("degenerate inputs: no points, one point, a line of points")
    func degenerate() throws {
        #expect(RotatedRect.minimumArea(enclosing: []) == nil)
        let single = try #require(RotatedRect.minimumArea(enclosing: [Point(3, 4)]))
        #expect(single.area == 0)
        let line = try #require(RotatedRect.minimumArea(enclosing: [Point(0, 0), Point(5, 5), Point(10, 10)]))
        #expect(line.shortSide == 0)
        #expect(abs(max(line.sides.0, line.sides.1) - 200.0.squareRoot()) < 1e-9)
    }

    @Test("unclip grows a rectangle by area × 1.6 / perimeter on every side, corners rounded")
    func unclipOffsetsRectangle() throws {
        let box = [Point(10, 20), Point(110, 20), Point(110, 40), Point(10, 40)]
        let distance = PolygonOffset.unclipDistance(area: 100 * 20, perimeter: 240, ratio: 1.6)
        #expect(abs(distance - 2000 * 1.6 / 240) < 1e-12)
        for polygon in [box, box.reversed()] {
            let grown = PolygonOffset.rounded(polygon, by: distance)
            let rect = try #require(RotatedRect.minimumArea(enclosing: grown))
            #expect(abs(max(rect.sides.0, rect.sides.1) - (100 + 2 * distance)) < 1e-6)
            #expect(abs(min(rect.sides.0, rect.sides.1) - (20 + 2 * distance)) < 1e-6)
            // Round corners: every outline point is `distance` from the original rectangle, none beyond.
            for point in grown {
                let dx = max(10 - point.x, 0, point.x - 110), dy = max(20 - point.y, 0, point.y - 40)
                #expect(abs((dx * dx + dy * dy).squareRoot() - distance) < 1e-6)
            }
        }
    }

    /// A map with probability `value` inside the given axis-aligned boxes (x, y, width, height) and 0 elsewhere.
    static func map(width: Int, height: Int, boxes: [(Int, Int, Int, Int)], value: Float = 0.9) -> ProbabilityMap {
        var values = [Float](repeating: 0, count: width * height)
        for (x0, y0, w, h) in boxes {
            for y in y0..<y0 + h { for x in x0..<x0 + w { values[y * width + x] = value } }
        }
        return ProbabilityMap(width: width, height: height, values: values)
    }

    @Test("two shrunken lines on a map come back as two grown quadrilaterals in reading order of their tops")
    func regionsFromMap() throws {
        let map = Self.map(width: 200, height: 100, boxes: [(20, 20, 120, 10), (30, 60, 60, 12)])
        let regions = map.regions()
        try #require(regions.count == 2)
        let first = try #require(regions.first { $0.corners[0].y < 50 })
        // Dilation adds a pixel right and down: the component spans x 20…140, y 20…30 (pixel centres).
        // Unclip: 120 × 10 → distance 1200 × 1.6 / 260 ≈ 7.4 on each side.
        let d = 120.0 * 10 * 1.6 / 260
        #expect(abs(first.corners[0].x - (20 - d)) < 0.01 && abs(first.corners[0].y - (20 - d)) < 0.01)
        #expect(abs(first.corners[2].x - (140 + d)) < 0.01 && abs(first.corners[2].y - (30 + d)) < 0.01)
        // The score is the mean over the dilated box (121 × 11 pixels), of which 120 × 10 hold 0.9.
        #expect(abs(first.score - 0.9 * 1200 / (121 * 11)) < 1e-6)
    }

    @Test("weak regions, specks and diagonal neighbours: score threshold, minimum size, 8-connectivity")
    func regionFiltering() {
        // Probability 0.4: above the pixel threshold 0.3, under the box threshold 0.5.
        #expect(Self.map(width: 100, height: 50, boxes: [(10, 10, 60, 10)], value: 0.4).regions().isEmpty)
        // A 2×2 speck (3×3 after dilation, short side 2) is noise.
        #expect(Self.map(width: 100, height: 50, boxes: [(10, 10, 2, 2)]).regions().isEmpty)
        // Two squares touching at a corner are one component.
        let map = Self.map(width: 60, height: 60, boxes: [(10, 10, 10, 10), (20, 20, 10, 10)])
        #expect(map.components(of: map.dilatedMask(threshold: 0.3)).count == 1)
        // An empty map, a 1×1 map.
        #expect(ProbabilityMap(width: 0, height: 0, values: []).regions().isEmpty)
        #expect(ProbabilityMap(width: 1, height: 1, values: [1]).regions().isEmpty)
    }

    @Test("the corners come ordered top left, top right, bottom right, bottom left at any start")
    func cornerOrder() {
        let corners = [Point(0, 0), Point(10, 1), Point(9, 6), Point(-1, 5)]
        for shift in 0..<4 {
            let rotated = Array(corners[shift...] + corners[..<shift])
            #expect(RotatedRect(corners: rotated).orderedCorners == corners)
        }
    }
}
