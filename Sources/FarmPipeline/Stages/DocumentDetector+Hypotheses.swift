import FarmCore
import Leptonica
#if canImport(Glibc)
import Glibc
#endif

/// Whole-quadrilateral hypotheses: every four sides that turn around a convex shape are scored first by how much of
/// each side real edges support, and the best few are then scored again by how the picture differs across each
/// side (a document is another material than what it lies on), so that the choice is made late, on more than edges.
extension DocumentDetector {
    /// Samples across a side whose colors must differ, and by how much (gray levels, the strongest channel).
    static let contrastStep = 14.0
    /// Hypotheses kept from the edge search for the second look.
    static let keptHypotheses = 40

    /// A side a document can have: a Hough line, or an edge of the image (where a document runs out of the
    /// frame, the frame cuts it). Support is precomputed along the whole line as prefix sums, so any segment's
    /// support is two lookups and only the part inside the image is judged.
    struct Side {
        /// Unit normal toward the document (a Hough line's brighter side, or the other one for its flipped copy).
        let normal: Point
        let rho: Double
        let degrees: Int
        let isBorder: Bool
        /// Whether the normal points to the line's darker side: the copy of a Hough line for documents that are
        /// darker than what lies beyond that side.
        var flipped = false
        /// Index i holds the counts for samples t < i − reach, t the position along the line.
        let supported: [Int32]
        let visible: [Int32]
        let reach: Int

        var direction: Point { Point(-normal.y, normal.x) }

        func parameter(_ p: Point) -> Double { direction.x * p.x + direction.y * p.y }

        /// Supported and visible samples between two points of the line.
        func counts(from a: Point, to b: Point) -> (supported: Int, visible: Int) {
            var i = Int(parameter(a).rounded()) + reach, j = Int(parameter(b).rounded()) + reach
            if i > j { swap(&i, &j) }
            i = min(max(i, 0), supported.count - 1)
            j = min(max(j, 0), supported.count - 1)
            return (Int(supported[j] - supported[i]), Int(visible[j] - visible[i]))
        }

        /// A Hough line with its support profile: a sample is supported when an edge pixel within 2 px has its
        /// bright side toward the line's normal or straight away from it (within 20°). A card's edge can change
        /// polarity along its length (lighter than a green bag, darker than the white paper beside it), and only
        /// the line itself needs one bright side.
        init(line: Line, maps: [EdgeMap]) {
            let width = maps[0].width, height = maps[0].height
            normal = line.normal
            rho = line.rho
            degrees = line.degrees
            isBorder = false
            reach = Int((Double(width * width + height * height)).squareRoot().rounded(.up))
            var supported = [Int32](repeating: 0, count: 2 * reach + 2), visible = supported
            let d = Point(-normal.y, normal.x)
            for index in 0...(2 * reach) {
                let p = normal * rho + d * Double(index - reach)
                let inside = p.x >= -0.5 && p.y >= -0.5 && p.x < Double(width) - 0.5 && p.y < Double(height) - 0.5
                var found = false
                for offset in -2...2 where inside && !found {
                    let x = Int((p.x + normal.x * Double(offset)).rounded()), y = Int((p.y + normal.y * Double(offset)).rounded())
                    guard x >= 0, y >= 0, x < width, y < height else { continue }
                    let i = y * width + x
                    for map in maps where map.edges[i] {
                        var difference = (map.direction[i] - Float(degrees)).truncatingRemainder(dividingBy: 360)
                        if difference > 180 { difference -= 360 }
                        if difference < -180 { difference += 360 }
                        if abs(difference) < 20 || abs(difference) > 160 { found = true; break }
                    }
                }
                supported[index + 1] = supported[index] + (found ? 1 : 0)
                visible[index + 1] = visible[index] + (inside ? 1 : 0)
            }
            self.supported = supported
            self.visible = visible
        }

        /// The same line with its normal turned around, for a document on its darker side. A card's edges need
        /// not share one polarity: it can be lighter than the bag under one side and darker than the paper beside
        /// another. Support does not depend on the normal's sense; its profile runs the other way along the line.
        init(flipping side: Side) {
            normal = side.normal * -1
            rho = -side.rho
            degrees = (side.degrees + 180) % 360
            isBorder = side.isBorder
            flipped = !side.flipped
            reach = side.reach
            // Sample s (at index s + 1 of a profile) is sample 2·reach − s of the other sense.
            let last = side.supported.count - 1
            supported = (0...last).map { side.supported[last] - side.supported[last - $0] }
            visible = (0...last).map { side.visible[last] - side.visible[last - $0] }
        }

        /// The normal toward the line's brighter side, where its edges step up.
        var brightNormal: Point { flipped ? normal * -1 : normal }

        /// One of the image's four edges (0 left, 1 top, 2 right, 3 bottom), normal inward, no edge support.
        init(border: Int, width: Int, height: Int) {
            let w = Double(width - 1), h = Double(height - 1)
            (normal, rho, degrees) = [(Point(1, 0), 0, 0), (Point(0, 1), 0, 90), (Point(-1, 0), -w, 180), (Point(0, -1), -h, 270)][border]
            isBorder = true
            reach = Int((Double(width * width + height * height)).squareRoot().rounded(.up))
            supported = [Int32](repeating: 0, count: 2 * reach + 2)
            var visible = supported
            let d = Point(-normal.y, normal.x)
            for index in 0...(2 * reach) {
                let p = normal * rho + d * Double(index - reach)
                let inside = p.x >= -0.5 && p.y >= -0.5 && p.x <= w + 0.5 && p.y <= h + 0.5
                visible[index + 1] = visible[index] + (inside ? 1 : 0)
            }
            self.visible = visible
        }
    }

    /// A quadrilateral hypothesis. Corner k joins side k and side k+1; side k runs from corner k−1 to corner k.
    struct Candidate {
        let corners: [Point]
        let sides: [Side]
        /// Per side: the fraction of its visible part that edges support, and that differs in color across it.
        var supports: [Double]
        var contrasts: [Double]
        let edgeScore: Double
        var score: Double
        /// 0…1: the weakest real side, judged by both edges and color.
        var confidence: Double
    }

    static func intersection(_ a: Side, _ b: Side) -> Point? {
        let n1 = a.normal, n2 = b.normal
        let determinant = n1.x * n2.y - n1.y * n2.x
        guard abs(determinant) > 1e-6 else { return nil }
        return Point((a.rho * n2.y - b.rho * n1.y) / determinant, (n1.x * b.rho - n2.x * a.rho) / determinant)
    }

    /// The best hypotheses by edge support (at most one side an image border), each with enough of every real
    /// side visible and supported. A document is brighter than all its surroundings or darker than all of them;
    /// with `eitherSense`, it may be brighter across some sides and darker across others (a card lighter than the
    /// bag under it and darker than the paper beside it): every line is tried with the document on either side of
    /// it, and a hypothesis keeps only the sense in which all its normals point into it.
    static func edgeHypotheses(_ lines: [Side], width: Int, height: Int, eitherSense: Bool = false) -> [Candidate] {
        let w = Double(width), h = Double(height)
        let margin = 0.1 * max(w, h)
        let borders = (0..<4).map { Side(border: $0, width: width, height: height) }
        let senses = eitherSense ? lines + lines.map(Side.init(flipping:)) : lines
        let sides = (senses + borders).sorted { $0.degrees < $1.degrees }
        let n = sides.count
        guard n >= 4 else { return [] }
        var found: [Candidate] = []
        // Sides in order of their normals' angles; each turn to the next side is a right angle ± 45°, and each two
        // neighbours meet near the image (`corner`, computed once per pair). Both are checked as the sides are
        // picked, so that most of the combinations are never formed.
        var corner = [Point?](repeating: nil, count: n * n)
        for i in 0..<n {
            for j in 0..<n where i != j {
                let difference = ((sides[j].degrees - sides[i].degrees) % 360 + 360) % 360
                guard difference >= 45 && difference <= 135, let p = intersection(sides[i], sides[j]),
                      p.x >= -margin, p.y >= -margin, p.x <= w + margin, p.y <= h + margin else { continue }
                corner[i * n + j] = p
            }
        }
        let border = sides.map { $0.isBorder ? 1 : 0 }
        for a in 0..<n { for b in (a + 1)..<n {
            guard let p0 = corner[a * n + b], border[a] + border[b] <= 1 else { continue }
            for c in (b + 1)..<n {
            guard let p1 = corner[b * n + c], border[a] + border[b] + border[c] <= 1 else { continue }
            for d in (c + 1)..<n {
            guard let p2 = corner[c * n + d], let p3 = corner[d * n + a],
                  border[a] + border[b] + border[c] + border[d] <= 1 else { continue }
            let chosen = [sides[a], sides[b], sides[c], sides[d]]
            let corners = [p0, p1, p2, p3]
            guard Quad(corners).area >= minimumArea * w * h else { continue }
            if eitherSense {
                let centre = corners.reduce(Point(0, 0), +) * 0.25
                guard chosen.allSatisfy({ $0.normal.x * centre.x + $0.normal.y * centre.y > $0.rho }) else { continue }
            }
            var supports: [Double] = [], score = 0.0, acceptable = true
            for k in 0..<4 {
                let start = corners[(k + 3) % 4], end = corners[k]
                let (supported, visible) = chosen[k].counts(from: start, to: end)
                if chosen[k].isBorder {
                    // Where the frame cuts a document, the sides beside the cut run on into the frame's edge:
                    // their last stretch there must be supported too (not a card's end hidden by a thumb).
                    let ends = borderEnds(corners, border: k)
                    supports.append(ends.map { end in
                        let (supported, visible) = chosen[end.side].counts(from: end.from, to: end.to)
                        return visible >= 5 ? Double(supported) / Double(visible) : 0
                    }.min() ?? 0)
                    continue
                }
                // Most of a real side must be in the picture: a side that is only a stub says little.
                guard Double(visible) >= max(10, 0.4 * start.distance(to: end)) else { acceptable = false; break }
                let fraction = Double(supported) / Double(visible)
                guard fraction >= minimumSideSupport else { acceptable = false; break }
                supports.append(fraction)
                score += Double(visible) * (2 * fraction - 1)
            }
            guard acceptable else { continue }
            found.append(Candidate(corners: corners, sides: chosen, supports: supports, contrasts: [], edgeScore: score,
                                   score: score, confidence: 0))
        } } } }
        found.sort { $0.edgeScore > $1.edgeScore }
        // Near-copies of one quadrilateral (a side seen twice, a shadow beside an edge) would crowd out the others.
        var kept: [Candidate] = []
        for candidate in found where kept.count < keptHypotheses {
            let copy = kept.contains { other in
                zip(other.corners, candidate.corners).allSatisfy { $0.distance(to: $1) < 8 }
            }
            if !copy { kept.append(candidate) }
        }
        return kept
    }

    /// The hypotheses scored by how well they separate a document from its surroundings: edge support and color
    /// contrast across every side together (the best is chosen by `score`). A confidence is its weakest real side.
    static func scoredHypotheses(_ hypotheses: [Candidate], planes: ColorPixels) -> [Candidate] {
        var result: [Candidate] = []
        for var candidate in hypotheses {
            var score = 0.0, weakest = 1.0
            candidate.contrasts = (0..<4).map { k in
                if candidate.sides[k].isBorder {
                    return borderEnds(candidate.corners, border: k).map { end in
                        contrast(from: end.from, to: end.to, normal: candidate.sides[end.side].normal, planes)
                    }.min() ?? 0
                }
                return contrast(from: candidate.corners[(k + 3) % 4], to: candidate.corners[k],
                                normal: candidate.sides[k].normal, planes)
            }
            for k in 0..<4 {
                if candidate.sides[k].isBorder {
                    weakest = min(weakest, (candidate.supports[k] * candidate.contrasts[k]).squareRoot())
                    continue
                }
                let start = candidate.corners[(k + 3) % 4], end = candidate.corners[k]
                let (_, visible) = candidate.sides[k].counts(from: start, to: end)
                let s = candidate.supports[k], c = candidate.contrasts[k]
                score += Double(visible) * (s + c - 1)
                weakest = min(weakest, (s * c).squareRoot())
            }
            // A side the frame cuts is taken on trust: a little less sure.
            candidate.confidence = weakest * (candidate.sides.contains(where: \.isBorder) ? 0.9 : 1)
            // A document is outlined all round: one weak side (a line borrowed from the clutter) sinks the lot.
            candidate.score = score * (0.5 + 0.5 * candidate.confidence) * aspectPrior(candidate)
            result.append(candidate)
        }
        return result
    }

    // MARK: Nesting

    /// Whether `inner` lies within `outer`: its corners no more than `slack` pixels outside any side of `outer`.
    /// Judged from the corners alone (a first-look side's normal may point either way).
    static func contains(_ outer: Candidate, _ inner: Candidate, slack: Double = 3) -> Bool {
        let c = outer.corners
        let turn = (c[1].x - c[0].x) * (c[2].y - c[1].y) - (c[1].y - c[0].y) * (c[2].x - c[1].x) >= 0 ? 1.0 : -1.0
        return inner.corners.allSatisfy { p in
            (0..<4).allSatisfy { i in
                let a = c[i], b = c[(i + 1) % 4], length = max(1e-9, a.distance(to: b))
                return turn * ((b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)) / length >= -slack
            }
        }
    }

    /// Whether the two quadrilaterals have a side in common: one of `inner`'s sides lies on one of `outer`'s,
    /// (a band across a card shares the card's edge, or the frame's).
    static func sharesSide(_ outer: Candidate, _ inner: Candidate, tolerance: Double = 4) -> Bool {
        (0..<4).contains { k in
            outer.sides.contains { lies(inner, side: k, on: $0, tolerance: tolerance) }
        }
    }

    /// Whether `candidate`'s side `k` lies on the line of `side`: parallel to it (normals within about 11°) and
    /// both its ends within `tolerance` pixels of it.
    static func lies(_ candidate: Candidate, side k: Int, on side: Side, tolerance: Double) -> Bool {
        let n = candidate.sides[k].normal
        return abs(side.normal.x * n.x + side.normal.y * n.y) > 0.98
            && [candidate.corners[(k + 3) % 4], candidate.corners[k]].allSatisfy {
                abs(side.normal.x * $0.x + side.normal.y * $0.y - side.rho) <= tolerance
            }
    }

    /// The enclosing hypothesis that the chosen one is only a part of, if any: a band or a box printed on a
    /// document, chosen over the document for its sharp print. The document contains it, shares a side with it
    /// (the band runs to the card's edge), is itself outlined well enough to be trusted, has edges all along
    /// where its sides run on past the chosen one's (`extensionSupport`), and the part of it around the chosen
    /// one is of the chosen one's material (the card's paper) rather than of what lies around the document. The
    /// largest such document wins, and the rule is applied again to it.
    static func enclosing(_ chosen: Candidate, among hypotheses: [Candidate], planes: ColorPixels,
                          minimumConfidence: Double) -> Candidate
    {
        var current = chosen
        for _ in 0..<3 {
            let area = Quad(current.corners).area
            let outers = hypotheses.filter { outer in
                outer.confidence >= minimumConfidence && Quad(outer.corners).area >= 1.2 * area
                    && contains(outer, current) && sharesSide(outer, current)
                    && (extensionSupport(outer, current) ?? 1) >= minimumSideSupport
            }.sorted { Quad($0.corners).area > Quad($1.corners).area }
            guard let outer = outers.first(where: { isPart(current, of: $0, planes: planes) }) else { break }
            current = outer
        }
        return current
    }

    /// Where `outer`'s sides run on along `inner`'s sides, beyond `inner`'s corners: the least edge support of
    /// those runs (nil when no side runs on by 8 samples or more). A card's side runs on past the band printed
    /// across it along the card's own edge; a page lying on another sheet can make a larger outline with three
    /// sides of that sheet and one of its own carried on across the sheet, where no edge is (a white page on a
    /// white sheet, the sheet's paper of the page's material).
    static func extensionSupport(_ outer: Candidate, _ inner: Candidate, tolerance: Double = 4) -> Double? {
        var least: Double?
        for k in 0..<4 where !outer.sides[k].isBorder {
            let side = outer.sides[k]
            func along(_ t: Double) -> Point { side.normal * side.rho + side.direction * t }
            let ends = [side.parameter(outer.corners[(k + 3) % 4]), side.parameter(outer.corners[k])].sorted()
            for j in 0..<4 where lies(inner, side: j, on: side, tolerance: tolerance) {
                let own = [side.parameter(inner.corners[(j + 3) % 4]), side.parameter(inner.corners[j])].sorted()
                for (from, to) in [(ends[0], own[0]), (own[1], ends[1])] where to - from >= 8 {
                    let (supported, visible) = side.counts(from: along(from), to: along(to))
                    guard visible >= 8 else { continue }
                    least = min(least ?? 1, Double(supported) / Double(visible))
                }
            }
        }
        return least
    }

    /// Whether what lies between `inner` and `outer` is of `inner`'s material: its mean color lies within the
    /// spread of `inner`'s own colors (RMS distance from their mean), and nearer to `inner`'s than to that of
    /// `outer`'s surroundings (a ring a tenth as wide as `outer`). The desk around a card that some outline of
    /// the clutter happens to contain is further from the card's colors than the card's own print is.
    static func isPart(_ inner: Candidate, of outer: Candidate, planes: ColorPixels) -> Bool {
        let center = outer.corners.reduce(Point(0, 0), +) * 0.25
        let around = Candidate(corners: outer.corners.map { center + ($0 - center) * 1.2 }, sides: [], supports: [],
                               contrasts: [], edgeScore: 0, score: 0, confidence: 0)
        // On the same side of all four sides, whichever way the corners turn. (Plain loops: this runs for every
        // other pixel, and the tests' debug build makes closures per pixel slow.)
        func inside(_ corners: [Point], _ p: Point) -> Bool {
            var left = true, right = true
            for i in 0..<4 {
                let a = corners[i], b = corners[(i + 1) % 4]
                let cross = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
                if !(cross >= 0) { left = false }
                if !(cross <= 0) { right = false }
            }
            return left || right
        }
        var sums = [Double](repeating: 0, count: 12)   // inner, between, around: r, g, b, count
        var innerSquares = 0.0
        let xs = around.corners.map(\.x), ys = around.corners.map(\.y)
        let x0 = max(0, Int(xs.min()!)), x1 = min(planes.width - 1, Int(xs.max()!.rounded(.up)))
        let y0 = max(0, Int(ys.min()!)), y1 = min(planes.height - 1, Int(ys.max()!.rounded(.up)))
        guard x0 < x1, y0 < y1 else { return false }
        // Every other pixel: the means need no more.
        for y in stride(from: y0, through: y1, by: 2) {
            for x in stride(from: x0, through: x1, by: 2) {
                let p = Point(Double(x), Double(y))
                let region: Int
                if inside(inner.corners, p) { region = 0 }
                else if inside(outer.corners, p) { region = 1 }
                else if inside(around.corners, p) { region = 2 }
                else { continue }
                let i = y * planes.width + x
                sums[4 * region] += Double(planes.red[i]); sums[4 * region + 1] += Double(planes.green[i])
                sums[4 * region + 2] += Double(planes.blue[i]); sums[4 * region + 3] += 1
                if region == 0 {
                    let r = Double(planes.red[i]), g = Double(planes.green[i]), b = Double(planes.blue[i])
                    innerSquares += r * r + g * g + b * b
                }
            }
        }
        guard sums[3] >= 20, sums[7] >= 20, sums[11] >= 20 else { return false }
        let means = (0..<3).map { region in (0..<3).map { sums[4 * region + $0] / sums[4 * region + 3] } }
        func distance(_ a: [Double], _ b: [Double]) -> Double {
            zip(a, b).map { ($0 - $1) * ($0 - $1) }.reduce(0, +).squareRoot()
        }
        let spread = max(0, innerSquares / sums[3] - means[0].map { $0 * $0 }.reduce(0, +)).squareRoot()
        let gap = distance(means[1], means[0])
        return gap < spread && gap < distance(means[1], means[2])
    }

    /// The last fifth of each of the two sides beside border side `k`, at the border's end: (side, from, to).
    static func borderEnds(_ corners: [Point], border k: Int) -> [(side: Int, from: Point, to: Point)] {
        let before = (k + 3) % 4, after = (k + 1) % 4
        // Side `before` runs from corner k−2 to corner k−1 (on the border); side `after` from corner k (on the
        // border) to corner k+1.
        let a = corners[(k + 3) % 4], aFar = corners[(k + 2) % 4]
        let b = corners[k], bFar = corners[(k + 1) % 4]
        return [(before, a + (aFar - a) * 0.2, a), (after, b, b + (bFar - b) * 0.2)]
    }

    /// A soft preference for the shapes documents have: cards (1.59), passports (1.42), A4 (1.41) and letter
    /// (1.29) pages all lie below 1.8, while a band across a document (a stripe of its design, one text line)
    /// is long and thin. Longer shapes are not ruled out (a receipt), only made to win by more. A quadrilateral
    /// the frame cuts has no telling shape.
    static func aspectPrior(_ candidate: Candidate) -> Double {
        guard !candidate.sides.contains(where: \.isBorder) else { return 1 }
        let c = candidate.corners
        let first = (c[0].distance(to: c[1]) + c[2].distance(to: c[3])) / 2
        let second = (c[1].distance(to: c[2]) + c[3].distance(to: c[0])) / 2
        let aspect = max(first, second) / max(1, min(first, second))
        return aspect <= 1.8 ? 1 : max(0.5, 1 - 0.35 * (aspect - 1.8))
    }

    /// The fraction of points along the visible part of a side where the colors a few pixels inside and outside
    /// differ by at least `contrastStep` in some channel.
    static func contrast(from start: Point, to end: Point, normal: Point, _ planes: ColorPixels) -> Double {
        let width = Double(planes.width), height = Double(planes.height)
        func inImage(_ p: Point) -> Bool { p.x >= 0 && p.y >= 0 && p.x <= width - 1 && p.y <= height - 1 }
        let samples = 40
        var differing = 0, judged = 0
        for s in 0..<samples {
            let t = 0.05 + 0.9 * Double(s) / Double(samples - 1)
            let p = start + (end - start) * t
            let inside = [p + normal * 3, p + normal * 5], outside = [p - normal * 3, p - normal * 5]
            guard (inside + outside).allSatisfy(inImage) else { continue }
            judged += 1
            var strongest = 0.0
            for plane in [planes.red, planes.green, planes.blue] {
                let a = inside.reduce(0) { $0 + bilinear(plane, planes, $1) } / 2
                let b = outside.reduce(0) { $0 + bilinear(plane, planes, $1) } / 2
                strongest = max(strongest, abs(a - b))
            }
            if strongest >= contrastStep { differing += 1 }
        }
        // A side whose outside lies beyond the frame cannot be judged by color: neither for nor against.
        return judged >= 4 ? Double(differing) / Double(judged) : 0.5
    }
}
