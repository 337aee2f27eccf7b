import FarmCore

/// One text line cut out of the page and turned upright: its pixels, and the transform from its pixel
/// coordinates back to the page's (so word boxes found along it land on the page).
struct LineCrop: Sendable {
    var image: NeuralImage
    /// Crop coordinates (x along the line, y across it, continuous) → page coordinates.
    var toPage: Homography
    /// The text region it was cut from.
    var region: TextRegion

    /// A crop holds at most this many pixels: a huge region is sampled more coarsely (the recognizer sees it
    /// 48 pixels high anyway), so memory stays bounded on any page.
    static let maxPixels = 1 << 20

    /// The region's quadrilateral warped to a rectangle as long and as high as its longer opposite sides (the
    /// reference's `get_rotate_crop_image`, bilinear where it is bicubic), turned a quarter counter-clockwise when
    /// it is at least 1.5 times as high as wide (a vertical line). Nil for a degenerate region.
    init?(_ region: TextRegion, of page: NeuralImage) {
        let c = region.corners
        var width = Double(Int(max(c[0].distance(to: c[1]), c[2].distance(to: c[3]))))
        var height = Double(Int(max(c[0].distance(to: c[3]), c[1].distance(to: c[2]))))
        guard width >= 1, height >= 1 else { return nil }
        if width * height > Double(Self.maxPixels) {
            let shrink = (Double(Self.maxPixels) / (width * height)).squareRoot()
            width = max(1, (width * shrink).rounded(.down))
            height = max(1, (height * shrink).rounded(.down))
        }
        let rectangle = Quad(width: width, height: height).corners
        guard let image = page.warped(c, width: Int(width), height: Int(height)),
              let toPage = Homography.mapping(from: rectangle, to: c) else { return nil }
        self.image = image
        self.toPage = toPage
        self.region = region
        if height / width >= 1.5 { turnCounterClockwise() }
    }

    /// Turns the crop a quarter counter-clockwise: crop point (x, y) was point (width − y, x) before.
    mutating func turnCounterClockwise() {
        let oldWidth = Double(image.width)
        image = image.rotatedCounterClockwise()
        toPage = Homography([0, -1, oldWidth, 1, 0, 0, 0, 0, 1]).then(toPage)
    }

    /// Turns the crop upside down: crop point (x, y) was point (width − x, height − y) before.
    mutating func turnHalf() {
        image = image.rotatedHalfTurn()
        toPage = Homography([-1, 0, Double(image.width), 0, -1, Double(image.height), 0, 0, 1]).then(toPage)
    }

    /// The page rectangle holding the crop's strip from `start` to `end` along the line, across it from `rows`'s
    /// lower to its upper bound (the full height when nil), clipped to `bounds`; nil when nothing is left.
    func pageBox(from start: Double, to end: Double, rows: Range<Int>? = nil, within bounds: Rect) -> Rect? {
        let top = Double(rows?.lowerBound ?? 0), bottom = Double(rows?.upperBound ?? image.height)
        let corners = [Point(start, top), Point(end, top), Point(end, bottom), Point(start, bottom)].map(toPage.apply)
        let x0 = max(Double(bounds.x), corners.map(\.x).min()!.rounded(.down))
        let y0 = max(Double(bounds.y), corners.map(\.y).min()!.rounded(.down))
        let x1 = min(Double(bounds.maxX), corners.map(\.x).max()!.rounded(.up))
        let y1 = min(Double(bounds.maxY), corners.map(\.y).max()!.rounded(.up))
        guard x0.isFinite, y0.isFinite, x1.isFinite, y1.isFinite, x1 > x0, y1 > y0 else { return nil }
        return Rect(x: Int(x0), y: Int(y0), width: Int(x1 - x0), height: Int(y1 - y0))
    }

    /// The rows of the crop its line's ink covers. The detector's regions are grown by half a line or more on each
    /// side (its unclip step), so a crop takes in white and the edges of the lines above and below; boxes as tall
    /// overlap their neighbours' on dense print (a receipt's rows) and a PDF's invisible text stands taller than the
    /// print. From the inked row nearest the crop's middle, rows are taken up and down while they hold ink (darker
    /// than halfway between the crop's paper and print, `inkThreshold`); a blank row ends the line. Nil when the crop
    /// has no ink near its middle (the full height stands).
    var inkRows: Range<Int>? {
        let width = image.width, height = image.height
        guard width > 0, height > 2 else { return nil }
        // Luminance: the single gray plane, or the mean of blue, green and red.
        var gray = image.planes[0]
        if image.planes.count == 3 {
            for i in gray.indices {
                gray[i] = UInt8((Int(image.planes[0][i]) + Int(image.planes[1][i]) + Int(image.planes[2][i])) / 3)
            }
        }
        guard let threshold = Self.inkThreshold(gray) else { return nil }
        let minimum = max(1, width / 200)
        let inked = (0..<height).map { y in
            var count = 0
            for x in 0..<width where gray[y * width + x] < threshold { count += 1 }
            return count >= minimum
        }
        // The inked row nearest the middle, within its central half.
        let middle = height / 2
        guard let seed = (0...(height / 4)).lazy.flatMap({ [middle - $0, middle + $0] })
            .first(where: { $0 >= 0 && $0 < height && inked[$0] }) else { return nil }
        var top = seed, bottom = seed
        while top > 0 && inked[top - 1] { top -= 1 }
        while bottom < height - 1 && inked[bottom + 1] { bottom += 1 }
        // One row of white on each side, as a box drawn round print has.
        return max(0, top - 1)..<min(height, bottom + 2)
    }

    /// Halfway between the crop's paper (its 90th percentile gray level) and its print (the 5th), or nil when they
    /// differ by too little to tell ink from paper (a blank or flat crop).
    static func inkThreshold(_ gray: [UInt8]) -> UInt8? {
        let levels = LevelHistogram(gray)
        let print = levels.percentile(0.05), paper = levels.percentile(0.9)
        guard paper - print >= 32 else { return nil }
        return UInt8((print + paper) / 2)
    }
}
