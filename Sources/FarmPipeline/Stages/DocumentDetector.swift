import FarmCore
import Leptonica
#if canImport(Glibc)
import Glibc
#endif

/// Finds a document in a photo: the convex quadrilateral whose sides edges support and across which the picture
/// changes, on a busy desk as on a plain one.
///
/// 1. On a copy 800 px across, each color channel is closed (text disappears into the paper), put on a log scale
///    (so shadows weigh like light) and differentiated: gradient strength and the direction toward the brighter
///    side, thinned to edge pixels.
/// 2. A progressive Hough transform over 360° (a line and its brighter side) collects up to 32 lines, each one
///    taken giving back its pixels' votes, so clutter's fans of lines do not crowd out the document's sides.
/// 3. Every four sides (Hough lines, or one image border where the document runs out of the frame) that turn
///    around a convex shape are scored by the edge support of the visible part of each side; the best 40
///    distinct ones are kept (DocumentDetector+Hypotheses.swift).
/// 4. Those are scored again, late: color contrast across each side, the weakest side, a soft preference for
///    document shapes; the best is refined on the full-resolution image (per side, the strongest step into the
///    brighter side, to a fraction of a pixel, then a robust line fit; neighbouring lines meet in the corners).
/// 5. When there are hypotheses but none is sure, and the frame is not a scan, steps 1–4 are run again at a lower edge threshold
///    with more lines (a light card on white paper), and that look's best replaces the first only by a margin.
/// 6. A band or box printed on the document that was chosen over it gives way to an enclosing hypothesis from
///    either look that shares a side with it and whose part around it is of its material (DocumentDetector+Hypotheses.swift).
/// The confidence is a small logistic model over the chosen outline's evidence: the weakest side's edge support ×
/// contrast (geometric mean), the color step across its weakest side, how close a distinct rival came, how much of
/// the frame's border is paper, whether the frame cuts it (DocumentDetector+Confidence.swift). Below
/// RectifyStage's threshold, or with no quadrilateral at all, the frame is the page.
public enum DocumentDetector {
    static let coarseSize = 800.0
    static let closing = 9
    static let edgeThreshold: Float = 0.035
    /// The second look's edge threshold: a step of about 5% in brightness (a white card on white paper).
    static let faintEdgeThreshold: Float = 0.012
    /// The second look's line count: weak edges bring more clutter, so the document's sides rank lower.
    static let faintLineCount = 48
    /// Below this confidence the first look is not sure enough to skip the second one.
    static let sureConfidence = 0.7
    /// By how much the second look's hypothesis must beat the first look's to replace it.
    static let secondLookMargin = 0.15
    static let voteSpread = 3
    static let lineCount = 32
    static let minimumArea = 0.05
    /// Fraction of a real side's visible part that edges must support for the side to be considered at all.
    static let minimumSideSupport = 0.3
    /// Gray levels by which print is darker than the paper around it.
    static let inkContrast = 40
    /// Print density outside / inside above which a quadrilateral is a box on the page, not the page. Measured:
    /// ≤ 0.12 around real pages on a desk (SmartDoc frames, synthetic photos), 0.36–0.49 around tables printed on
    /// a page that fills the photo.
    static let outsideInkRatio = 0.25
    /// Flat-page confidence (the squared share of blank paper in the frame's border) from which the frame is taken
    /// for a scanned page: about 0.7 of the border paper. Then print beyond a quadrilateral makes it a box on the
    /// page, and no second look for faint sides is made.
    static let flatPageForBox = 0.5

    public static func detect(_ image: Pix) throws(LeptonicaError) -> DocumentDetection {
        let width = Double(image.width), height = Double(image.height)
        let factor = min(1, coarseSize / max(width, height))
        let color = image.depth == 32 ? image : try image.grayscale()
        let coarse = factor < 1 ? try color.resampled(by: factor) : color
        // A gray image has one channel to look at; a color one three (a page can differ from its background in
        // hue alone).
        let components = coarse.depth == 32 ? [1, 2, 3] : [0]
        var ink: (plane: GrayPixels, closed: GrayPixels)?
        let closedPlanes = try components.map { (component: Int) throws(LeptonicaError) -> GrayPixels in
            let plane = component == 0 ? coarse : try coarse.component(component)
            let closed = try plane.closedGray(width: closing, height: closing).grayPixels()
            if component == 0 || component == 2 { ink = (try plane.grayPixels(), closed) }   // gray, or green: where print shows best
            return closed
        }
        let channels = closedPlanes.map { EdgeMap($0, threshold: edgeThreshold) }
        let mask = GrayPixels(width: channels[0].width, height: channels[0].height,
                              data: channels[0].edges.map { $0 ? 255 : 0 })
        let flatness = try flatPageConfidence(coarse)
        func frame(confidence: Double) -> DocumentDetection {
            DocumentDetection(corners: Quad(width: width, height: height), confidence: confidence, isFullFrame: true,
                              mask: mask, imageWidth: image.width, imageHeight: image.height, flatness: flatness)
        }
        let planes = try coarse.blurred(halfWidth: 1, halfHeight: 1).colorPixels()
        func search(_ maps: [EdgeMap], lines count: Int, eitherSense: Bool = false) -> [Candidate] {
            let lines = houghLines(maps, count: count).map { Side(line: $0, maps: maps) }
            return scoredHypotheses(edgeHypotheses(lines, width: mask.width, height: mask.height, eitherSense: eitherSense),
                                    planes: planes)
        }
        var hypotheses = search(channels, lines: lineCount)
        var chosen = hypotheses.max { $0.score < $1.score }
        // A light card on white paper has sides a few gray levels high, below the edge threshold or crowded out of
        // the line list by the clutter's stronger lines. Only when the first look is not sure, look again at weaker
        // edges and more lines. Weak edges bring clutter too, so the second look's hypothesis must be clearly more
        // convincing to replace the first one (measured on MIDV-500: the cards it finds gain 0.3 or more, while a
        // blurred hand-held card swapped for a worse quadrilateral at +0.09).
        // Only where the first look found some quadrilateral: where it found none (a page that fills the photo),
        // weak edges would only outline its print (tables, text blocks: five such photos in phone-scan-ru-sample
        // and ocrd-degraded-and-camera were cropped when they did), and a frame bordered by blank paper is a scan.
        // The second look also lets a document be lighter than what lies beyond some sides and darker than what lies
        // beyond others (a card on a bag and its lettering, a receipt on a white sheet on a desk: decision 0103);
        // in the first look that lets the clutter's outlines in (a card's photo box outscored the card).
        if let first = chosen?.confidence, first < sureConfidence, flatness < flatPageForBox {
            let faint = closedPlanes.map { EdgeMap($0, threshold: faintEdgeThreshold) }
            let more = search(faint, lines: faintLineCount, eitherSense: true)
            hypotheses += more
            if let second = more.max(by: { $0.score < $1.score }), second.confidence >= first + secondLookMargin {
                chosen = second
            }
        }
        // A band or box printed on the document can outscore the document; its enclosing outline takes over.
        if let inner = chosen {
            chosen = enclosing(inner, among: hypotheses, planes: planes, minimumConfidence: RectifyStage.minimumConfidence)
        }
        guard let best = chosen else {
            return frame(confidence: flatness)
        }
        // Coarse corners in full-resolution pixels, then each side refined there.
        let coarseCorners = best.corners.map { Point(($0.x + 0.5) / factor - 0.5, ($0.y + 0.5) / factor - 0.5) }
        let refined = try refine(coarseCorners, sides: best.sides, image: try color.rgb(), factor: factor) ?? coarseCorners
        let corners = Quad(ordered(refined))
        guard corners.isConvex else { return frame(confidence: 0) }
        let weighed = evidence(for: best, among: hypotheses, corners: corners, planes: planes, flatness: flatness,
                                width: width, height: height)
        let confidence = calibratedConfidence(weighed)
        // What was weighed, for `inspect --json`: the chosen outline even when the frame is kept.
        func keptFrame(confidence: Double) -> DocumentDetection {
            DocumentDetection(corners: Quad(width: width, height: height), confidence: confidence, isFullFrame: true,
                              mask: mask, imageWidth: image.width, imageHeight: image.height,
                              flatness: flatness, evidence: weighed.named, candidate: corners)
        }
        let documentMask = quadMask(corners, width: mask.width, height: mask.height, factor: factor)
        // A box printed on the page (a logo, a table), not the page: the text goes on past its edges, and the
        // frame's border is mostly paper, as on a scan. In a photo, the clutter around a document can hold as
        // much dark detail, but the border is rarely mostly paper (on MIDV-500 only the two frames of a light card
        // on a printed white box come near, at 0.30 and 0.35; scans are at 0.9 or more).
        if let ink, textLiesOutside(documentMask, plane: ink.plane, closed: ink.closed), flatness >= flatPageForBox {
            return keptFrame(confidence: flatness)
        }
        // Below the threshold nothing downstream trusts the corners: say so, and keep the whole frame.
        guard confidence >= RectifyStage.minimumConfidence else {
            return keptFrame(confidence: max(confidence, flatness))
        }
        return DocumentDetection(corners: corners, confidence: confidence, isFullFrame: false, mask: documentMask,
                                 imageWidth: image.width, imageHeight: image.height, flatness: flatness,
                                 evidence: weighed.named, candidate: corners)
    }

    // MARK: Edges

    /// One channel's gradient on a log scale, thinned to edge pixels.
    struct EdgeMap {
        let width: Int
        let height: Int
        /// Gradient direction in degrees, pointing toward the brighter side.
        var direction: [Float]
        var edges: [Bool]

        init(_ plane: GrayPixels, threshold: Float) {
            width = plane.width
            height = plane.height
            let width = width, height = height
            let table = (0..<256).map { logf(Float($0) + 8) }
            let logged = plane.data.map { table[Int($0)] }
            let smooth = gaussianBlur(logged, width: width, height: height)
            var magnitude = [Float](repeating: 0, count: width * height)
            var direction = magnitude
            var edges = [Bool](repeating: false, count: width * height)
            // Unsafe buffers: the tests' debug build checks every array access, and these loops touch every pixel.
            smooth.withUnsafeBufferPointer { smooth in
                magnitude.withUnsafeMutableBufferPointer { magnitude in
                    direction.withUnsafeMutableBufferPointer { direction in
                        for y in 1..<max(1, height - 1) {
                            for x in 1..<max(1, width - 1) {
                                let i = y * width + x
                                let a = smooth[i - width - 1], b = smooth[i - width], c = smooth[i - width + 1]
                                let d = smooth[i - 1], f = smooth[i + 1]
                                let g = smooth[i + width - 1], h = smooth[i + width], k = smooth[i + width + 1]
                                let sx = ((c + 2 * f + k) - (a + 2 * d + g)) / 8
                                let sy = ((g + 2 * h + k) - (a + 2 * b + c)) / 8
                                magnitude[i] = (sx * sx + sy * sy).squareRoot()
                                // Only edge candidates need a direction, and atan2 is most of the cost of this loop.
                                if magnitude[i] > threshold { direction[i] = atan2f(sy, sx) * 180 / .pi }
                            }
                        }
                    }
                }
            }
            magnitude.withUnsafeBufferPointer { magnitude in
                direction.withUnsafeBufferPointer { direction in
                    edges.withUnsafeMutableBufferPointer { edges in
                        for y in 1..<max(1, height - 1) {
                            for x in 1..<max(1, width - 1) {
                                let i = y * width + x
                                let m = magnitude[i]
                                guard m > threshold else { continue }
                                // Keep local maxima along the gradient, quantized to four directions.
                                let angle = (direction[i] + 180).truncatingRemainder(dividingBy: 180)
                                let sector = Int((angle + 22.5) / 45) % 4
                                let (a, b): (Int, Int)
                                switch sector {
                                case 0: (a, b) = (i + 1, i - 1)
                                case 1: (a, b) = (i + width + 1, i - width - 1)
                                case 2: (a, b) = (i + width, i - width)
                                default: (a, b) = (i + width - 1, i - width + 1)
                                }
                                edges[i] = m >= magnitude[a] && m >= magnitude[b]
                            }
                        }
                    }
                }
            }
            self.direction = direction
            self.edges = edges
        }
    }

    /// A separable Gaussian blur with σ = 1, the image's edge pixels repeated beyond it: rows, then columns, each
    /// sum taken in the kernel's order (`blurTaps`), so every result is the same float however the loops run.
    static func gaussianBlur(_ input: [Float], width: Int, height: Int) -> [Float] {
        precondition(input.count == width * height, "a \(width) × \(height) image of \(input.count) values")
        var temp = [Float](repeating: 0, count: input.count), output = temp
        let t = blurTaps
        let t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3], t4 = t[4], t5 = t[5], t6 = t[6]
        input.withUnsafeBufferPointer { source in
            temp.withUnsafeMutableBufferPointer { out in
                for y in 0..<height {
                    let row = y * width
                    for x in 0..<width {
                        var sum: Float = 0
                        if x >= 3 && x + 3 < width {
                            let p = row + x
                            sum += t0 * source[p - 3]; sum += t1 * source[p - 2]; sum += t2 * source[p - 1]
                            sum += t3 * source[p]
                            sum += t4 * source[p + 1]; sum += t5 * source[p + 2]; sum += t6 * source[p + 3]
                        } else {
                            for k in -3...3 { sum += t[k + 3] * source[row + min(max(x + k, 0), width - 1)] }
                        }
                        out[row + x] = sum
                    }
                }
            }
        }
        temp.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { out in
                func row(_ y: Int) -> Int { min(max(y, 0), height - 1) * width }
                for y in 0..<height {
                    let r0 = row(y - 3), r1 = row(y - 2), r2 = row(y - 1), r3 = row(y)
                    let r4 = row(y + 1), r5 = row(y + 2), r6 = row(y + 3)
                    for x in 0..<width {
                        var sum: Float = 0
                        sum += t0 * source[r0 + x]; sum += t1 * source[r1 + x]; sum += t2 * source[r2 + x]
                        sum += t3 * source[r3 + x]
                        sum += t4 * source[r4 + x]; sum += t5 * source[r5 + x]; sum += t6 * source[r6 + x]
                        out[r3 + x] = sum
                    }
                }
            }
        }
        return output
    }

    /// The blur's kernel, k = -3...3.
    static let blurTaps: [Float] = [0.00443, 0.05400, 0.24203, 0.39905, 0.24203, 0.05400, 0.00443]

    // MARK: Lines

    /// A line x·cosθ + y·sinθ = ρ whose brighter side lies toward +(cosθ, sinθ).
    struct Line {
        let degrees: Int
        let rho: Double
        var normal: Point { Point(cos(Double(degrees) * .pi / 180), sin(Double(degrees) * .pi / 180)) }
    }

    /// Whether two lines are one within the image: near in angle, with the same bright side, and the ends of one
    /// (where it crosses the image) close to the other.
    static func sameLine(_ a: Line, _ b: Line, width: Int, height: Int) -> Bool {
        let turn = ((a.degrees - b.degrees) % 360 + 360) % 360
        guard min(turn, 360 - turn) <= 8 else { return false }
        let n = b.normal, d = Point(-n.y, n.x), foot = n * b.rho
        // Where b crosses the image rectangle: its parameter range along d (Liang–Barsky).
        var low = -Double.infinity, high = Double.infinity
        for (p, q, limit) in [(foot.x, d.x, Double(width - 1)), (foot.y, d.y, Double(height - 1))] {
            if abs(q) < 1e-9 {
                if p < 0 || p > limit { return false }
            } else {
                let t0 = (0 - p) / q, t1 = (limit - p) / q
                low = max(low, min(t0, t1))
                high = min(high, max(t0, t1))
            }
        }
        guard low <= high else { return false }
        let m = a.normal
        return [low, high].allSatisfy { t in
            let p = foot + d * t
            return abs(m.x * p.x + m.y * p.y - a.rho) <= 6
        }
    }

    /// Each edge pixel of every map, map by map in raster order: its position and its gradient's direction.
    static func edgePixels(_ maps: [EdgeMap]) -> (x: [Float], y: [Float], direction: [Float]) {
        var xs: [Float] = [], ys: [Float] = [], directions: [Float] = []
        for map in maps {
            let width = map.width
            map.edges.withUnsafeBufferPointer { edges in
                map.direction.withUnsafeBufferPointer { direction in
                    for i in 0..<(width * map.height) where edges[i] {
                        xs.append(Float(i % width))
                        ys.append(Float(i / width))
                        directions.append(direction[i])
                    }
                }
            }
        }
        return (xs, ys, directions)
    }

    /// The Hough cells (θ · columns + ρ) with at least 10 votes that are local maxima, in cell order.
    static func peakCells(_ votes: [Float], columns: Int) -> [Int] {
        var peaks: [Int] = []
        votes.withUnsafeBufferPointer { votes in
            for theta in 0..<360 {
                for rho in 1..<(columns - 1) {
                    let index = theta * columns + rho, value = votes[index]
                    guard value >= 10 else { continue }
                    let up = ((theta + 1) % 360) * columns + rho, down = ((theta + 359) % 360) * columns + rho
                    if value >= votes[index - 1], value > votes[index + 1], value >= votes[up], value > votes[down] {
                        peaks.append(index)
                    }
                }
            }
        }
        return peaks
    }

    /// The hot loops index unsafe buffers: the tests run a debug build, where checked array access and generic
    /// iteration made this function half of a photo's detection time. The arithmetic is the same as with arrays.
    static func houghLines(_ maps: [EdgeMap], count: Int) -> [Line] {
        let width = maps[0].width, height = maps[0].height
        precondition(maps.allSatisfy { $0.width == width && $0.height == height
            && $0.edges.count == width * height && $0.direction.count == width * height }, "edge maps of one size")
        let reach = Int(((Double(width * width + height * height)).squareRoot()).rounded(.up))
        let columns = 2 * reach + 1
        var votes = [Float](repeating: 0, count: 360 * columns)
        let cosines = (0..<360).map { Float(cos(Double($0) * .pi / 180)) }
        let sines = (0..<360).map { Float(sin(Double($0) * .pi / 180)) }
        let spread = voteSpread
        let (pixelX, pixelY, pixelDirection) = edgePixels(maps)
        let pixelCount = pixelX.count
        // Adds `change` to the cells an edge pixel votes for: its direction ± the spread, each at its ρ.
        func vote(_ votes: UnsafeMutableBufferPointer<Float>, _ cosines: UnsafeBufferPointer<Float>,
                  _ sines: UnsafeBufferPointer<Float>, x: Float, y: Float, direction: Float, change: Float)
        {
            let phi = Int(direction.rounded())
            for offset in -spread...spread {
                let theta = ((phi + offset) % 360 + 360) % 360
                let rho = Int((x * cosines[theta] + y * sines[theta]).rounded()) + reach
                votes[theta * columns + rho] += change
            }
        }
        cosines.withUnsafeBufferPointer { cosines in
            sines.withUnsafeBufferPointer { sines in
                votes.withUnsafeMutableBufferPointer { votes in
                    for e in 0..<pixelCount {
                        vote(votes, cosines, sines, x: pixelX[e], y: pixelY[e], direction: pixelDirection[e], change: 1)
                    }
                }
            }
        }
        // Lines are taken strongest first, and each one taken gives back the votes of the edge pixels on it
        // (progressive Hough): a short segment votes for a fan of lines through it and a long one for a slanted
        // ridge of cells, and neither should fill the list with copies of itself.
        var peaks = peakCells(votes, columns: columns)
        peaks.sort { votes[$0] > votes[$1] }
        peaks = Array(peaks.prefix(4000))
        var used = [Bool](repeating: false, count: pixelCount)
        var lines: [Line] = []
        while lines.count < count {
            // The strongest remaining peak (the first of equals).
            var best = -1, bestVotes: Float = 0
            votes.withUnsafeBufferPointer { votes in
                peaks.withUnsafeBufferPointer { peaks in
                    for k in 0..<peaks.count where best < 0 || votes[peaks[k]] > bestVotes {
                        best = k
                        bestVotes = votes[peaks[k]]
                    }
                }
            }
            guard best >= 0, bestVotes >= 10 else { break }
            let index = peaks[best]
            peaks.remove(at: best)
            let line = Line(degrees: index / columns, rho: Double(index % columns - reach))
            if lines.contains(where: { sameLine($0, line, width: width, height: height) }) { continue }
            lines.append(line)
            let nx = Float(line.normal.x), ny = Float(line.normal.y), lineRho = Float(line.rho)
            let lineDegrees = Float(line.degrees)
            cosines.withUnsafeBufferPointer { cosines in
                sines.withUnsafeBufferPointer { sines in
                    votes.withUnsafeMutableBufferPointer { votes in
                        used.withUnsafeMutableBufferPointer { used in
                            pixelX.withUnsafeBufferPointer { xs in
                                pixelY.withUnsafeBufferPointer { ys in
                                    pixelDirection.withUnsafeBufferPointer { directions in
                                        for e in 0..<pixelCount where !used[e] {
                                            let x = xs[e], y = ys[e]
                                            guard abs(x * nx + y * ny - lineRho) <= 2 else { continue }
                                            var difference = (directions[e] - lineDegrees).truncatingRemainder(dividingBy: 360)
                                            if difference > 180 { difference -= 360 }
                                            if difference < -180 { difference += 360 }
                                            guard abs(difference) < 20 else { continue }
                                            used[e] = true
                                            vote(votes, cosines, sines, x: x, y: y, direction: directions[e], change: -1)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return lines.sorted { $0.degrees < $1.degrees }
    }

    // MARK: Refinement

    /// Moves each side onto the strongest step into the bright side at full resolution; nil when a corner would
    /// move implausibly far.
    static func refine(_ corners: [Point], sides: [Side], image: Pix, factor: Double) throws(LeptonicaError) -> [Point]? {
        let band = Int((3 / factor + 4).rounded())
        // Only the pixels near the quadrilateral are looked at: blurring and unpacking the whole frame cost more
        // than the fit itself when the document is small.
        let reach = Double(band + 4)
        let x0 = max(0, Int((corners.map(\.x).min()! - reach).rounded(.down)))
        let y0 = max(0, Int((corners.map(\.y).min()! - reach).rounded(.down)))
        let x1 = min(image.width, Int((corners.map(\.x).max()! + reach).rounded(.up)))
        let y1 = min(image.height, Int((corners.map(\.y).max()! + reach).rounded(.up)))
        guard x1 - x0 >= 8, y1 - y0 >= 8 else { return nil }
        let origin = Point(Double(x0), Double(y0))
        let planes = try image.cropped(to: Box(x: x0, y: y0, width: x1 - x0, height: y1 - y0))
            .blurred(halfWidth: 1, halfHeight: 1).colorPixels()
        var lines: [(normal: Point, rho: Double)] = []
        for k in 0..<4 {
            let normal = sides[k].normal
            if sides[k].isBorder {
                // The frame's own edge, at full resolution.
                let far = sides[k].rho < 0
                let size = Double(normal.x != 0 ? image.width : image.height) - 1
                lines.append((normal, far ? -size : 0))
                continue
            }
            // Only the part inside the image has anything to fit.
            guard let (start, end) = visiblePart(from: corners[(k + 3) % 4], to: corners[k],
                                                 width: Double(image.width), height: Double(image.height)) else { return nil }
            if let line = refineSide(from: start - origin, to: end - origin, normal: sides[k].brightNormal, band: band, planes) {
                lines.append((line.normal, line.rho + line.normal.x * origin.x + line.normal.y * origin.y))
            } else {
                let middle = (start + end) * 0.5
                lines.append((normal, normal.x * middle.x + normal.y * middle.y))
            }
        }
        var refined: [Point] = []
        for k in 0..<4 {
            let (n1, r1) = lines[k], (n2, r2) = lines[(k + 1) % 4]
            let determinant = n1.x * n2.y - n1.y * n2.x
            guard abs(determinant) > 1e-9 else { return nil }
            refined.append(Point((r1 * n2.y - r2 * n1.y) / determinant, (n1.x * r2 - n2.x * r1) / determinant))
        }
        let limit = 6 / factor + 10
        for (old, new) in zip(corners, refined) where old.distance(to: new) >= limit { return nil }
        return refined
    }

    /// The total-least-squares line through `points` (at least one): their centre and the angle (radians) of their
    /// principal direction, the one along which they spread most.
    static func principalAxis(of points: [Point]) -> (centre: Point, angle: Double) {
        let centre = points.reduce(Point(0, 0), +) * (1 / Double(points.count))
        var sxx = 0.0, sxy = 0.0, syy = 0.0
        for p in points {
            let d = p - centre
            sxx += d.x * d.x; sxy += d.x * d.y; syy += d.y * d.y
        }
        return (centre, 0.5 * atan2(2 * sxy, sxx - syy))
    }

    /// The segment clipped to the image rectangle, or nil when it lies outside.
    static func visiblePart(from a: Point, to b: Point, width: Double, height: Double) -> (Point, Point)? {
        var low = 0.0, high = 1.0
        let d = b - a
        for (p, q, limit) in [(a.x, d.x, width - 1), (a.y, d.y, height - 1)] {
            if abs(q) < 1e-9 {
                if p < 0 || p > limit { return nil }
            } else {
                let t0 = (0 - p) / q, t1 = (limit - p) / q
                low = max(low, min(t0, t1))
                high = min(high, max(t0, t1))
            }
        }
        guard low < high else { return nil }
        return (a + d * low, a + d * high)
    }

    static func refineSide(from start: Point, to end: Point, normal: Point, band: Int, _ planes: ColorPixels)
        -> (normal: Point, rho: Double)?
    {
        let length = start.distance(to: end)
        let count = Int(length / 4)
        guard count >= 5 else { return nil }
        var points: [Point] = []
        var strengths: [Double] = []
        for s in 0..<count {
            let t = 0.05 + 0.9 * Double(s) / Double(count - 1)
            let base = start + (end - start) * t
            // The derivative toward the inside, the strongest of the three channels, at each offset.
            var derivative = [Double](repeating: 0, count: 2 * band - 1)
            for index in 0..<(2 * band - 1) {
                let offset = Double(index - band + 1)
                let ahead = base + normal * (offset + 1), behind = base + normal * (offset - 1)
                derivative[index] = max(bilinear(planes.red, planes, ahead) - bilinear(planes.red, planes, behind),
                                        bilinear(planes.green, planes, ahead) - bilinear(planes.green, planes, behind),
                                        bilinear(planes.blue, planes, ahead) - bilinear(planes.blue, planes, behind))
            }
            guard let k = derivative.indices.max(by: { derivative[$0] < derivative[$1] }) else { continue }
            var sub = 0.0
            if k > 0 && k < derivative.count - 1 {
                let a = derivative[k - 1], b = derivative[k], c = derivative[k + 1]
                let denominator = a - 2 * b + c
                if abs(denominator) > 1e-6 { sub = min(1, max(-1, 0.5 * (a - c) / denominator)) }
            }
            points.append(base + normal * (Double(k - band + 1) + sub))
            strengths.append(derivative[k])
        }
        let median = strengths.sorted()[strengths.count / 2]
        let threshold = max(4, 0.3 * median)
        let strong = zip(points, strengths).filter { $0.1 > threshold }.map(\.0)
        guard strong.count >= 5 else { return nil }
        // Total least squares, four passes, dropping points beyond 2.5 robust standard deviations.
        var keep = [Bool](repeating: true, count: strong.count)
        var fitted: (normal: Point, rho: Double)?
        for _ in 0..<4 {
            let kept = zip(strong, keep).filter { $0.1 }.map(\.0)
            guard kept.count >= 5 else { return nil }
            let (center, angle) = principalAxis(of: kept)
            var n = Point(-sin(angle), cos(angle))
            if n.x * normal.x + n.y * normal.y < 0 { n = n * -1 }
            let rho = n.x * center.x + n.y * center.y
            fitted = (n, rho)
            let residuals = strong.map { abs(n.x * $0.x + n.y * $0.y - rho) }
            let keptResiduals = zip(residuals, keep).filter { $0.1 }.map(\.0).sorted()
            let mad = keptResiduals[keptResiduals.count / 2]
            let limit = max(1, 2.5 * 1.4826 * mad)
            keep = residuals.map { $0 < limit }
        }
        return fitted
    }

    static func bilinear(_ plane: [UInt8], _ planes: ColorPixels, _ p: Point) -> Double {
        let x = min(max(p.x, 0), Double(planes.width - 1)), y = min(max(p.y, 0), Double(planes.height - 1))
        let x0 = Int(x), y0 = Int(y)
        let x1 = min(x0 + 1, planes.width - 1), y1 = min(y0 + 1, planes.height - 1)
        let fx = x - Double(x0), fy = y - Double(y0)
        let w = planes.width
        let top = Double(plane[y0 * w + x0]) * (1 - fx) + Double(plane[y0 * w + x1]) * fx
        let bottom = Double(plane[y1 * w + x0]) * (1 - fx) + Double(plane[y1 * w + x1]) * fx
        return top * (1 - fy) + bottom * fy
    }

    // MARK: Results

    /// Corners in the order top left, top right, bottom right, bottom left.
    static func ordered(_ points: [Point]) -> [Point] {
        let center = points.reduce(Point(0, 0), +) * 0.25
        let around = points.sorted { atan2($0.y - center.y, $0.x - center.x) < atan2($1.y - center.y, $1.x - center.x) }
        let first = around.indices.min { around[$0].x + around[$0].y < around[$1].x + around[$1].y }!
        return (0..<4).map { around[(first + $0) % 4] }
    }

    /// A low-resolution mask of the quadrilateral (255 inside).
    static func quadMask(_ quad: Quad, width: Int, height: Int, factor: Double) -> GrayPixels {
        let c = quad.corners.map { $0 * factor }
        let turn = (c[1].x - c[0].x) * (c[2].y - c[1].y) - (c[1].y - c[0].y) * (c[2].x - c[1].x) >= 0 ? 1.0 : -1.0
        var mask = GrayPixels(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                let p = Point(Double(x) + 0.5, Double(y) + 0.5)
                var inside = true
                for i in 0..<4 {
                    let a = c[i], b = c[(i + 1) % 4]
                    if turn * ((b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)) < 0 { inside = false; break }
                }
                if inside { mask[x, y] = 255 }
            }
        }
        return mask
    }

    /// Whether there is much print outside the quadrilateral compared with inside it, so that it cannot be the
    /// page: a document holds its text, while the desk around it holds little. Print is dark detail that the
    /// closing erased (a black top-hat), counted as a density inside and outside the mask.
    static func textLiesOutside(_ mask: GrayPixels, plane: GrayPixels, closed: GrayPixels) -> Bool {
        var inside = 0, insideArea = 0, outside = 0, outsideArea = 0
        for i in 0..<min(mask.data.count, plane.data.count) {
            let printed = Int(closed.data[i]) - Int(plane.data[i]) > inkContrast
            if mask.data[i] != 0 {
                insideArea += 1
                if printed { inside += 1 }
            } else {
                outsideArea += 1
                if printed { outside += 1 }
            }
        }
        // Too little outside to judge (the page fills the picture).
        guard outsideArea * 10 >= mask.data.count, insideArea > 0, inside > 0 else { return false }
        let insideDensity = Double(inside) / Double(insideArea), outsideDensity = Double(outside) / Double(outsideArea)
        return outsideDensity >= outsideInkRatio * insideDensity
    }

    /// How much the frame's border looks like blank paper (bright and gray): high for a flat scan. The full
    /// frame's confidence when no document is found.
    static func flatPageConfidence(_ coarse: Pix) throws(LeptonicaError) -> Double {
        let planes = try coarse.colorPixels()
        let w = planes.width, h = planes.height
        let band = max(2, min(w, h) / 20)
        var paper = 0, total = 0
        for y in 0..<h {
            for x in 0..<w where x < band || y < band || x >= w - band || y >= h - band {
                let i = y * w + x
                let high = max(planes.red[i], planes.green[i], planes.blue[i]), low = min(planes.red[i], planes.green[i], planes.blue[i])
                total += 1
                if high >= 150 && Int(high) - Int(low) < 40 { paper += 1 }
            }
        }
        // Squared: only a border that is nearly all paper makes a confident flat scan (a card on a white box
        // leaves half the border paper-like).
        let fraction = total > 0 ? Double(paper) / Double(total) : 0
        return fraction * fraction
    }
}

extension Pix {
    /// One channel of a color image as 8-bit gray: 1 red, 2 green, 3 blue.
    func component(_ index: Int) throws(LeptonicaError) -> Pix {
        try rgbComponent(index)
    }
}
