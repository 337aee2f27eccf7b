import FarmCore

/// A text region the detector found: its quadrilateral (top left, top right, bottom right, bottom left) and the
/// mean text probability inside it.
struct TextRegion: Sendable, Equatable {
    var corners: [Point]
    var score: Double
}

/// The detector's output: per pixel of its input, the probability of being inside (the shrunken core of) a text
/// line. Turned into text regions by DB's post-processing, with the reference pipeline's settings.
struct ProbabilityMap: Sendable {
    let width: Int
    let height: Int
    /// Row-major probabilities, `width * height`.
    let values: [Float]

    /// DB's settings (the reference pipeline's defaults, `config.yaml` `Det:`).
    struct Settings: Sendable {
        /// A pixel is text above this probability.
        var threshold: Float = 0.3
        /// A region is kept when its mean probability is at least this.
        var boxThreshold: Double = 0.5
        /// How far a region is grown back out (`PolygonOffset.unclipDistance`).
        var unclipRatio: Double = 1.6
        /// At most this many regions are looked at (a page of noise stays bounded).
        var maxCandidates = 1000
        /// Regions whose short side is under this many map pixels are noise.
        var minSize = 3.0
    }

    init(width: Int, height: Int, values: [Float]) {
        precondition(values.count == width * height)
        self.width = width
        self.height = height
        self.values = values
    }

    /// The text regions, in map coordinates: the map thresholded and dilated by a 2×2 square, each 8-connected
    /// component's smallest rotated rectangle, kept when its mean probability passes, grown by the unclip
    /// distance and re-fitted.
    func regions(_ settings: Settings = Settings()) -> [TextRegion] {
        guard width > 0, height > 0 else { return [] }
        let mask = dilatedMask(threshold: settings.threshold)
        var regions: [TextRegion] = []
        for component in components(of: mask).prefix(settings.maxCandidates) {
            guard let rect = RotatedRect.minimumArea(enclosing: component), rect.shortSide >= settings.minSize else { continue }
            let box = rect.orderedCorners
            let score = meanProbability(inside: box)
            guard score >= settings.boxThreshold else { continue }
            let distance = PolygonOffset.unclipDistance(area: rect.area, perimeter: rect.perimeter, ratio: settings.unclipRatio)
            guard let grown = RotatedRect.minimumArea(enclosing: PolygonOffset.rounded(box, by: distance)),
                  grown.shortSide >= settings.minSize + 2 else { continue }
            regions.append(TextRegion(corners: grown.orderedCorners, score: score))
        }
        return regions
    }

    /// Pixels above `threshold`, dilated by a 2×2 square anchored at its bottom right (OpenCV's anchor for an
    /// even kernel): a pixel is set when it or its left, upper or upper-left neighbour is above.
    func dilatedMask(threshold: Float) -> [Bool] {
        var mask = [Bool](repeating: false, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let i = y * width + x
                var on = values[i] > threshold
                if !on, x > 0 { on = values[i - 1] > threshold }
                if !on, y > 0 { on = values[i - width] > threshold || (x > 0 && values[i - width - 1] > threshold) }
                mask[i] = on
            }
        }
        return mask
    }

    /// The 8-connected components of `mask` in raster order of their first pixel, each as the two ends of each of
    /// its rows (their convex hull is the component's).
    func components(of mask: [Bool]) -> [[Point]] {
        var label = [Int32](repeating: -1, count: width * height)
        var components: [[Point]] = []
        var stack: [Int] = []
        for start in mask.indices where mask[start] && label[start] < 0 {
            let id = Int32(components.count)
            var rows: [Int: (Int, Int)] = [:]
            label[start] = id
            stack.append(start)
            while let i = stack.popLast() {
                let x = i % width, y = i / width
                if let (low, high) = rows[y] { rows[y] = (min(low, x), max(high, x)) } else { rows[y] = (x, x) }
                for dy in -1...1 {
                    let ny = y + dy
                    guard ny >= 0, ny < height else { continue }
                    for dx in -1...1 {
                        let nx = x + dx
                        guard nx >= 0, nx < width else { continue }
                        let j = ny * width + nx
                        if mask[j], label[j] < 0 { label[j] = id; stack.append(j) }
                    }
                }
            }
            components.append(rows.sorted { $0.key < $1.key }.flatMap { y, ends in
                [Point(Double(ends.0), Double(y)), Point(Double(ends.1), Double(y))]
            })
        }
        return components
    }

    /// The mean probability over the pixels inside the quadrilateral `box` (its corners truncated to whole pixels
    /// as OpenCV's `fillPoly` takes them; pixels on its edges count).
    func meanProbability(inside box: [Point]) -> Double {
        let corners = box.map { Point(Double(Int($0.x)), Double(Int($0.y))) }
        let xs = box.map(\.x), ys = box.map(\.y)
        let x0 = min(max(Int(xs.min()!.rounded(.down)), 0), width - 1), x1 = min(max(Int(xs.max()!.rounded(.up)), 0), width - 1)
        let y0 = min(max(Int(ys.min()!.rounded(.down)), 0), height - 1), y1 = min(max(Int(ys.max()!.rounded(.up)), 0), height - 1)
        var sum = 0.0, count = 0
        for y in y0...y1 {
            for x in x0...x1 where Self.contains(corners, Point(Double(x), Double(y))) {
                sum += Double(values[y * width + x])
                count += 1
            }
        }
        return count > 0 ? sum / Double(count) : 0
    }

    /// Whether `point` lies inside or on the edge of the convex polygon `polygon`.
    static func contains(_ polygon: [Point], _ point: Point) -> Bool {
        var sign = 0.0
        for i in polygon.indices {
            let a = polygon[i], b = polygon[(i + 1) % polygon.count]
            let cross = (b.x - a.x) * (point.y - a.y) - (b.y - a.y) * (point.x - a.x)
            if abs(cross) < 1e-9 { continue }
            if sign == 0 { sign = cross } else if (sign > 0) != (cross > 0) { return false }
        }
        return true
    }
}
