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

    /// The page rectangle holding the crop's strip from `start` to `end` along the line (its full height),
    /// clipped to `bounds`; nil when nothing is left.
    func pageBox(from start: Double, to end: Double, within bounds: Rect) -> Rect? {
        let h = Double(image.height)
        let corners = [Point(start, 0), Point(end, 0), Point(end, h), Point(start, h)].map(toPage.apply)
        let x0 = max(Double(bounds.x), corners.map(\.x).min()!.rounded(.down))
        let y0 = max(Double(bounds.y), corners.map(\.y).min()!.rounded(.down))
        let x1 = min(Double(bounds.maxX), corners.map(\.x).max()!.rounded(.up))
        let y1 = min(Double(bounds.maxY), corners.map(\.y).max()!.rounded(.up))
        guard x0.isFinite, y0.isFinite, x1.isFinite, y1.isFinite, x1 > x0, y1 > y0 else { return nil }
        return Rect(x: Int(x0), y: Int(y0), width: Int(x1 - x0), height: Int(y1 - y0))
    }
}
