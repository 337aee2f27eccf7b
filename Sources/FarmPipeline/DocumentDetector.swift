import FarmCore
import Leptonica

/// Finds a sheet of paper in a photo.
///
/// 1. On a copy ~512 px across, score each pixel for "paper": bright and unsaturated.
/// 2. Close the score image (text disappears into the paper), threshold it (Otsu), keep the largest component,
///    fill its holes: a coarse mask of the sheet.
/// 3. Take the mask's extreme points along the diagonals as coarse corners.
/// 4. Refine each side on a copy ~1200 px across: along the side's normal, find the strongest dark-to-bright step
///    near it, fit a line to those points (dropping outliers), and intersect neighbouring lines.
/// The confidence combines how much of each side has a clear edge with how plausible the shape is.
public enum DocumentDetector {
    static let coarseSize = 512.0
    static let fineSize = 1200.0

    public static func detect(_ image: Pix) throws(LeptonicaError) -> DocumentDetection {
        let width = Double(image.width), height = Double(image.height)
        let fullFrame = Quad(width: width, height: height)
        let coarseFactor = min(1, coarseSize / max(width, height))
        let coarse = try image.rgb().scaled(by: coarseFactor)
        let paper = try paperScore(coarse)
        let closed = try Pix(gray: paper).closedGray(width: 9, height: 9).grayPixels()
        let threshold = otsu(closed.data)
        var mask = GrayPixels(width: closed.width, height: closed.height,
                              data: closed.data.map { $0 > threshold ? 255 : 0 })
        mask = largestComponent(mask)
        mask = fillHoles(mask)
        let areaFraction = Double(mask.data.filter { $0 == 255 }.count) / Double(mask.data.count)

        func fullFrameResult(confidence: Double) -> DocumentDetection {
            DocumentDetection(corners: fullFrame, confidence: confidence, isFullFrame: true, mask: mask,
                              imageWidth: image.width, imageHeight: image.height)
        }
        guard areaFraction > 0.05, let coarseQuad = extremeCorners(mask) else { return fullFrameResult(confidence: 0) }
        // The sheet touches (nearly) the whole frame: a flat scan.
        if areaFraction > 0.93 { return fullFrameResult(confidence: areaFraction) }
        // What lies outside the candidate looks as much like paper as what lies inside: the frame is the page
        // (a scan with a text block in its middle), not a sheet on a desk.
        let (inside, outside) = meanScore(closed, mask: mask)
        if outside > 0.85 * inside { return fullFrameResult(confidence: 1 - areaFraction * (inside - outside) / max(inside, 1)) }

        let fineFactor = min(1, fineSize / max(width, height))
        let fine = try image.rgb().scaled(by: fineFactor)
        let fineScore = try paperScore(fine)
        let scale = fineFactor / coarseFactor
        let start = Quad(coarseQuad.corners.map { $0 * scale })
        let (refined, support) = refine(start, score: fineScore)
        let corners = Quad(refined.corners.map { $0 * (1 / fineFactor) })
        guard corners.isConvex else { return fullFrameResult(confidence: 0.1) }
        let coverage = corners.area / (width * height)
        if coverage > 0.92 { return fullFrameResult(confidence: coverage) }
        let shape = coverage > 0.08 ? 1.0 : coverage / 0.08
        let confidence = max(0, min(1, support * shape))
        return DocumentDetection(corners: corners, confidence: confidence, isFullFrame: false, mask: mask,
                                 imageWidth: image.width, imageHeight: image.height)
    }

    /// Per pixel: brightness times (1 − saturation), so white and light gray paper scores high, wood and cloth low.
    static func paperScore(_ image: Pix) throws(LeptonicaError) -> GrayPixels {
        let color = try image.colorPixels()
        var score = [UInt8](repeating: 0, count: color.width * color.height)
        for i in score.indices {
            let r = Int(color.red[i]), g = Int(color.green[i]), b = Int(color.blue[i])
            let high = max(r, g, b), low = min(r, g, b)
            // value × (1 − saturation) = value − (value − low) = low, softened so colored light still counts.
            score[i] = UInt8((low * 3 + high) / 4)
        }
        return GrayPixels(width: color.width, height: color.height, data: score)
    }

    /// Mean score inside and outside the mask.
    static func meanScore(_ score: GrayPixels, mask: GrayPixels) -> (inside: Double, outside: Double) {
        var sums = (0.0, 0.0), counts = (0.0, 0.0)
        for i in score.data.indices {
            if mask.data[i] == 255 { sums.0 += Double(score.data[i]); counts.0 += 1 } else { sums.1 += Double(score.data[i]); counts.1 += 1 }
        }
        return (sums.0 / max(counts.0, 1), sums.1 / max(counts.1, 1))
    }

    /// Otsu's threshold of 8-bit values.
    static func otsu(_ values: [UInt8]) -> UInt8 {
        var histogram = [Int](repeating: 0, count: 256)
        for v in values { histogram[Int(v)] += 1 }
        let total = Double(values.count)
        let sum = (0..<256).reduce(0.0) { $0 + Double($1 * histogram[$1]) }
        var sumBelow = 0.0, weightBelow = 0.0, best = 0.0, threshold = 0
        for t in 0..<256 {
            weightBelow += Double(histogram[t])
            if weightBelow == 0 { continue }
            let weightAbove = total - weightBelow
            if weightAbove == 0 { break }
            sumBelow += Double(t * histogram[t])
            let meanBelow = sumBelow / weightBelow, meanAbove = (sum - sumBelow) / weightAbove
            let between = weightBelow * weightAbove * (meanBelow - meanAbove) * (meanBelow - meanAbove)
            if between > best { (best, threshold) = (between, t) }
        }
        return UInt8(threshold)
    }

    /// The largest 4-connected component of 255s; everything else 0.
    static func largestComponent(_ mask: GrayPixels) -> GrayPixels {
        let w = mask.width, h = mask.height
        var labels = [Int32](repeating: 0, count: w * h)
        var sizes: [Int] = [0]
        var stack: [Int] = []
        for start in 0..<(w * h) where mask.data[start] == 255 && labels[start] == 0 {
            let label = Int32(sizes.count)
            var size = 0
            labels[start] = label
            stack.append(start)
            while let i = stack.popLast() {
                size += 1
                let x = i % w, y = i / w
                for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && ny >= 0 && nx < w && ny < h {
                    let n = ny * w + nx
                    if mask.data[n] == 255 && labels[n] == 0 { labels[n] = label; stack.append(n) }
                }
            }
            sizes.append(size)
        }
        guard let best = sizes.indices.dropFirst().max(by: { sizes[$0] < sizes[$1] }) else { return mask }
        return GrayPixels(width: w, height: h, data: labels.map { $0 == Int32(best) ? 255 : 0 })
    }

    /// Fills the holes of a mask: background not reachable from the border becomes foreground.
    static func fillHoles(_ mask: GrayPixels) -> GrayPixels {
        let w = mask.width, h = mask.height
        var outside = [Bool](repeating: false, count: w * h)
        var stack: [Int] = []
        for x in 0..<w { stack.append(x); stack.append((h - 1) * w + x) }
        for y in 0..<h { stack.append(y * w); stack.append(y * w + w - 1) }
        while let i = stack.popLast() {
            if outside[i] || mask.data[i] == 255 { continue }
            outside[i] = true
            let x = i % w, y = i / w
            if x > 0 { stack.append(i - 1) }
            if x < w - 1 { stack.append(i + 1) }
            if y > 0 { stack.append(i - w) }
            if y < h - 1 { stack.append(i + w) }
        }
        return GrayPixels(width: w, height: h, data: outside.map { $0 ? 0 : 255 })
    }

    /// The mask's extreme points along the diagonals: a first guess at the four corners.
    static func extremeCorners(_ mask: GrayPixels) -> Quad? {
        var tl = (Double.infinity, Point(0, 0)), br = (-Double.infinity, Point(0, 0))
        var tr = (-Double.infinity, Point(0, 0)), bl = (Double.infinity, Point(0, 0))
        var any = false
        for y in 0..<mask.height {
            for x in 0..<mask.width where mask.data[y * mask.width + x] == 255 {
                any = true
                let p = Point(Double(x) + 0.5, Double(y) + 0.5)
                let sum = p.x + p.y, difference = p.x - p.y
                if sum < tl.0 { tl = (sum, p) }
                if sum > br.0 { br = (sum, p) }
                if difference > tr.0 { tr = (difference, p) }
                if difference < bl.0 { bl = (difference, p) }
            }
        }
        return any ? Quad([tl.1, tr.1, br.1, bl.1]) : nil
    }

    /// Moves each side onto the strongest dark-to-bright step near it; returns the new corners and the fraction
    /// of sampled points that found a clear edge.
    static func refine(_ quad: Quad, score: GrayPixels) -> (Quad, Double) {
        let w = score.width, h = score.height
        let reach = Double(max(w, h)) * 0.02 + 4
        var lines: [(Point, Point)] = []
        var found = 0, sampled = 0
        let center = quad.corners.reduce(Point(0, 0), +) * 0.25
        for side in 0..<4 {
            let a = quad.corners[side], b = quad.corners[(side + 1) % 4]
            let length = a.distance(to: b)
            guard length > 8 else { return (quad, 0) }
            let direction = (b - a) * (1 / length)
            var normal = Point(-direction.y, direction.x)
            // Point the normal into the sheet.
            let middle = (a + b) * 0.5
            if (center.x - middle.x) * normal.x + (center.y - middle.y) * normal.y < 0 { normal = normal * -1 }
            var points: [Point] = []
            let samples = 48
            for s in 0..<samples {
                let t = 0.1 + 0.8 * Double(s) / Double(samples - 1)
                let base = a + (b - a) * t
                var bestStep = 0.0, bestOffset = 0.0
                var offset = -reach
                while offset <= reach {
                    let inside = base + normal * (offset + 1.5), outside = base + normal * (offset - 1.5)
                    let step = sample(score, inside) - sample(score, outside)
                    if step > bestStep { (bestStep, bestOffset) = (step, offset) }
                    offset += 0.5
                }
                sampled += 1
                if bestStep >= 12 {
                    found += 1
                    points.append(base + normal * bestOffset)
                }
            }
            guard points.count >= 6, let line = fitLine(points) else { lines.append((a, b)); continue }
            lines.append(line)
        }
        var corners: [Point] = []
        for i in 0..<4 {
            let previous = lines[(i + 3) % 4], current = lines[i]
            guard let p = intersect(previous, current), p.x > -Double(w) * 0.1, p.y > -Double(h) * 0.1,
                  p.x < Double(w) * 1.1, p.y < Double(h) * 1.1 else { return (quad, 0) }
            corners.append(p)
        }
        _ = (w, h)
        return (Quad(corners), sampled > 0 ? Double(found) / Double(sampled) : 0)
    }

    /// Bilinear sample of a gray raster (edges clamped).
    static func sample(_ image: GrayPixels, _ p: Point) -> Double {
        let x = min(max(p.x - 0.5, 0), Double(image.width - 1)), y = min(max(p.y - 0.5, 0), Double(image.height - 1))
        let x0 = Int(x), y0 = Int(y), x1 = min(x0 + 1, image.width - 1), y1 = min(y0 + 1, image.height - 1)
        let fx = x - Double(x0), fy = y - Double(y0)
        let top = Double(image[x0, y0]) * (1 - fx) + Double(image[x1, y0]) * fx
        let bottom = Double(image[x0, y1]) * (1 - fx) + Double(image[x1, y1]) * fx
        return top * (1 - fy) + bottom * fy
    }

    /// A total-least-squares line through the points, refit once without the worst quarter; as two points on it.
    static func fitLine(_ points: [Point]) -> (Point, Point)? {
        func fit(_ pts: [Point]) -> (center: Point, direction: Point)? {
            guard pts.count >= 2 else { return nil }
            let c = pts.reduce(Point(0, 0), +) * (1 / Double(pts.count))
            var sxx = 0.0, sxy = 0.0, syy = 0.0
            for p in pts {
                let d = p - c
                sxx += d.x * d.x; sxy += d.x * d.y; syy += d.y * d.y
            }
            let angle = 0.5 * atan2(2 * sxy, sxx - syy)
            return (c, Point(cos(angle), sin(angle)))
        }
        guard let first = fit(points) else { return nil }
        func distance(_ p: Point, _ line: (center: Point, direction: Point)) -> Double {
            let d = p - line.center
            return abs(d.x * line.direction.y - d.y * line.direction.x)
        }
        let kept = points.sorted { distance($0, first) < distance($1, first) }.prefix(max(2, points.count * 3 / 4))
        guard let line = fit(Array(kept)) else { return nil }
        return (line.center, line.center + line.direction)
    }

    static func intersect(_ l1: (Point, Point), _ l2: (Point, Point)) -> Point? {
        let (p, p2) = l1, (q, q2) = l2
        let r = p2 - p, s = q2 - q
        let denominator = r.x * s.y - r.y * s.x
        guard abs(denominator) > 1e-9 else { return nil }
        let t = ((q.x - p.x) * s.y - (q.y - p.y) * s.x) / denominator
        return p + r * t
    }
}

#if canImport(Glibc)
import Glibc
#endif
