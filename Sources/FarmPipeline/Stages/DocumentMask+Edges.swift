import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// The mask's outline moved to the photo's own edges (Training/mask/outline.py's `to_edges`): the mask's 128 cells
/// are 8–15 px of a phone photo, its edge is sharp.
extension DocumentMask {
    /// `quad` (photo pixels, from the mask) with each side moved to the photo's straight edge within
    /// `edgeReachCells` mask cells of it; a side without one stays. `quad` itself when a corner would move further
    /// than three times that (the lines crossed somewhere else).
    static func fittedToEdges(_ quad: [Point], photo: NeuralImage) -> [Point] {
        edgeFit(quad, photo: photo).corners
    }

    /// `fittedToEdges(_:photo:)`, and which of the quad's sides (from top left to top right first) have a straight
    /// edge of the photo near them (a sheet's four sides are straight edges; the mask's region within a page that
    /// fills the frame has few).
    static func edgeFit(_ quad: [Point], photo: NeuralImage) -> (corners: [Point], sides: [Bool]) {
        let scale = min(1, edgeLongSide / Double(max(photo.width, photo.height)))
        let gray = EdgeImage(photo, scale: scale)
        let q = quad.map { $0 * scale }
        let reach = max(3, Int((edgeReachCells * Double(max(gray.width, gray.height)) / Double(inputSize))
            .rounded(.toNearestOrEven)))
        let centre = q.reduce(Point(0, 0), +) * 0.25
        let fits = (0..<4).map { s in gray.sideFit(from: q[s], to: q[(s + 1) % 4], centre: centre, reach: reach) }
        let sides = fits.map { $0 != nil }
        let lines = (0..<4).map { (s: Int) -> (Point, Point) in
            if let fit = fits[s] { return fit }
            let a = q[s], b = q[(s + 1) % 4]
            return (a, (b - a) * (1 / a.distance(to: b)))
        }
        var corners: [Point] = []
        for s in 0..<4 {
            let (p, r) = lines[(s + 3) % 4], (o, t) = lines[s]
            guard let corner = crossing(p, r, o, t), corner.distance(to: q[s]) <= 3 * Double(reach) else {
                return (quad, sides)
            }
            corners.append(corner)
        }
        return (corners.map { Point($0.x / scale, $0.y / scale) }, sides)
    }
}

/// The photo as the edge fit sees it: gray (Pillow's "L" of its BILINEAR resize to at most
/// `DocumentMask.edgeLongSide`), blurred with a Gaussian of σ 1, as 32-bit floats.
struct EdgeImage {
    let width: Int
    let height: Int
    let values: [Float]

    init(_ photo: NeuralImage, scale: Double) {
        let small = scale == 1 ? photo : DocumentMask.resized(
            photo, width: Int((Double(photo.width) * scale).rounded(.toNearestOrEven)),
            height: Int((Double(photo.height) * scale).rounded(.toNearestOrEven)))
        width = small.width
        height = small.height
        values = DocumentDetector.gaussianBlur(Self.luma(small), width: width, height: height)
    }

    /// Pillow's "L" of `image` as floats: its gray plane, or its colour's ITU-R 601-2 luma in 16-bit fixed point.
    static func luma(_ image: NeuralImage) -> [Float] {
        guard image.planes.count == 3 else { return image.planes[0].map { Float($0) } }
        let count = image.width * image.height
        return [Float](unsafeUninitializedCapacity: count) { gray, initialized in
            image.planes[0].withUnsafeBufferPointer { blue in
                image.planes[1].withUnsafeBufferPointer { green in
                    image.planes[2].withUnsafeBufferPointer { red in
                        for i in 0..<count {
                            let r = Int(red[i]) &* 19595, g = Int(green[i]) &* 38470, b = Int(blue[i]) &* 7471
                            gray[i] = Float((r &+ g &+ b &+ 0x8000) >> 16)
                        }
                    }
                }
            }
            initialized = count
        }
    }

    /// The value at `p` (array coordinates: pixel centres on integers) by bilinear interpolation, the nearest
    /// pixel's beyond the image (scipy's `map_coordinates`, order 1, mode "nearest").
    func sample(_ p: Point) -> Double {
        let x = min(max(p.x, 0), Double(width - 1)), y = min(max(p.y, 0), Double(height - 1))
        let x0 = Int(x), y0 = Int(y)
        let x1 = min(x0 + 1, width - 1), y1 = min(y0 + 1, height - 1)
        let fx = x - Double(x0), fy = y - Double(y0)
        let top = Double(values[y0 * width + x0]) * (1 - fx) + Double(values[y0 * width + x1]) * fx
        let bottom = Double(values[y1 * width + x0]) * (1 - fx) + Double(values[y1 * width + x1]) * fx
        return top * (1 - fy) + bottom * fy
    }

    /// The photo's straight edge near side `a`–`b` as (point, direction), or nil when there is none.
    func sideFit(from a: Point, to b: Point, centre: Point, reach: Int) -> (Point, Point)? {
        let d = b - a
        let length = (d.x * d.x + d.y * d.y).squareRoot()
        let u = d * (1 / length)
        var outward = Point(u.y, -u.x)
        if DocumentMask.dot(outward, (a + b) * 0.5 - centre) < 0 { outward = outward * -1 }
        let places = (0..<DocumentMask.edgePlaces).map { i in
            i == DocumentMask.edgePlaces - 1 ? 0.92 : 0.08 + Double(i) * (0.84 / Double(DocumentMask.edgePlaces - 1))
        }
        let steps = places.map { t in strongestSteps(at: a + d * t, outward: outward, reach: reach) }
        let (across, usable) = Self.onePolarity(steps)
        guard let fit = Self.robustLine(along: places.map { $0 * length }, across: across, usable: usable) else {
            return nil
        }
        let direction = u + outward * fit.slope
        let norm = (direction.x * direction.x + direction.y * direction.y).squareRoot()
        return (a + outward * fit.intercept, direction * (1 / norm))
    }

    /// Across the side at `base` (offsets −reach…reach along `outward`): the offset and strength of the strongest
    /// rise and of the strongest fall (central differences), and whether every sample lies inside the photo.
    func strongestSteps(at base: Point, outward: Point, reach: Int)
        -> (rise: (offset: Double, strength: Double), fall: (offset: Double, strength: Double), inside: Bool)
    {
        let points = (-reach...reach).map { base + outward * Double($0) }
        let inside = points.allSatisfy { $0.x >= 1 && $0.x <= Double(width - 2) && $0.y >= 1 && $0.y <= Double(height - 2) }
        let profile = points.map { sample($0) }
        var step = [Double](repeating: 0, count: profile.count)
        for k in 1..<(profile.count - 1) { step[k] = profile[k + 1] - profile[k - 1] }
        // The first largest, as numpy's argmax.
        var rise = 0, fall = 0
        for k in step.indices {
            if step[k] > step[rise] { rise = k }
            if -step[k] > -step[fall] { fall = k }
        }
        return ((Double(rise - reach), step[rise]), (Double(fall - reach), -step[fall]), inside)
    }

    /// Per place, the offset of the strongest step of one polarity (the side's document is brighter, or darker, than
    /// what is outside it all along: the polarity whose usable steps sum highest, a rise on a tie), and whether the
    /// place is usable (inside the photo, a step of that polarity there).
    static func onePolarity(_ steps: [(rise: (offset: Double, strength: Double), fall: (offset: Double, strength: Double), inside: Bool)])
        -> (across: [Double], usable: [Bool])
    {
        let rises = steps.map(\.rise), falls = steps.map(\.fall)
        func total(_ chosen: [(offset: Double, strength: Double)]) -> Double {
            zip(chosen, steps).reduce(0) { sum, pair in pair.1.inside && pair.0.strength > 0 ? sum + pair.0.strength : sum }
        }
        let chosen = total(falls) > total(rises) ? falls : rises
        return (chosen.map(\.offset), zip(chosen, steps).map { $1.inside && $0.strength > 0 })
    }

    /// `across = intercept + slope × along` through most usable places: the line through the pair of usable places
    /// with the most places within `edgeTolerance` of it (every pair tried, in order: deterministic, and never fewer
    /// inliers than outline.py's 60 random pairs find: on one of six real frames they found another set, and its corner
    /// lies 0.07 px from outline.py's), refitted by least squares to those; nil when fewer than `edgeInliers` of all
    /// places agree.
    static func robustLine(along: [Double], across: [Double], usable: [Bool]) -> (intercept: Double, slope: Double)? {
        let indices = usable.indices.filter { usable[$0] }
        guard indices.count >= 2 else { return nil }
        var best: [Int] = []
        for (n, i) in indices.enumerated() {
            for j in indices[(n + 1)...] {
                let slope = (across[j] - across[i]) / (along[j] - along[i])
                let intercept = across[i] - slope * along[i]
                let norm = (1 + slope * slope).squareRoot()
                let near = indices.filter { abs(across[$0] - (intercept + slope * along[$0])) / norm <= DocumentMask.edgeTolerance }
                if near.count > best.count { best = near }
            }
        }
        guard Double(best.count) >= DocumentMask.edgeInliers * Double(along.count) else { return nil }
        // Ordinary least squares of across on along over the inliers.
        let count = Double(best.count)
        let meanAlong = best.reduce(0) { $0 + along[$1] } / count, meanAcross = best.reduce(0) { $0 + across[$1] } / count
        var sxy = 0.0, sxx = 0.0
        for k in best {
            sxy += (along[k] - meanAlong) * (across[k] - meanAcross)
            sxx += (along[k] - meanAlong) * (along[k] - meanAlong)
        }
        let slope = sxx > 0 ? sxy / sxx : 0
        return (meanAcross - slope * meanAlong, slope)
    }
}
