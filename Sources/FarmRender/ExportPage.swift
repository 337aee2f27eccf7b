import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// One recognized page as the renderers see it: the result model, and the image its coordinates refer to.
///
/// Boxes are given in the original image (the file the archive keeps), since that is the picture a viewer shows:
/// each box on the corrected page is mapped back through rectification, rotation, skew and scale, and reported as
/// its bounding rectangle plus, where the formats allow, the exact quadrilateral.
public struct ExportPage: Sendable {
    public let result: PageResult
    /// The image file the coordinates refer to (as given by the user).
    public let imageName: String
    /// 1-based position of the page in the output document.
    public let number: Int
    /// Tesseract language codes the page was read in, in priority order.
    public let languages: [String]
    /// The words of `result`, to size the documents rendered from it.
    public let wordCount: Int
    /// Every box of `result` in the original image (`Mapped`), mapped once for all the formats rendered from the
    /// page (each maps a word's box up to four times): the blocks by their index, the paragraphs, lines and words in
    /// reading order, across the blocks (their number on the page less one).
    private(set) var blockBoxes: [Mapped], paragraphBoxes: [Mapped], lineBoxes: [Mapped], wordBoxes: [Mapped]

    /// `result`'s boxes are made to hold their children (`PageResult.enclosingBoxes`) before rendering.
    public init(result: PageResult, imageName: String, number: Int, languages: [String] = ["eng"]) {
        self.result = Self.visibleWords(Self.trimmedWords(result)).enclosingBoxes()
        wordCount = self.result.blocks.reduce(0) { $0 + $1.paragraphs.reduce(0) { $0 + $1.lines.reduce(0) { $0 + $1.words.count } } }
        self.imageName = imageName
        self.number = number
        self.languages = languages
        (blockBoxes, paragraphBoxes, lineBoxes, wordBoxes) = ([], [], [], [])
        (blockBoxes, paragraphBoxes, lineBoxes, wordBoxes) = Self.mapBoxes(of: self)
    }

    /// A box in the original image: `bounds`, its bounding rectangle there (`bounds(_:)` for a word; for a block,
    /// paragraph or line the union of its children's, so that it holds them there too: a turned rectangle's bounds
    /// are wider than it; its own box's when it has none), and `polygon`, the corners of its own box as whole pixels
    /// inside the image.
    struct Mapped {
        var bounds: Rect
        var polygon: (x0: Int, y0: Int, x1: Int, y1: Int, x2: Int, y2: Int, x3: Int, y3: Int)
    }

    /// The boxes of `page` (`blockBoxes`, …), read from the one copy of it given (a mutating method's nested
    /// function copied the whole page for every box).
    private static func mapBoxes(of page: ExportPage) -> (blocks: [Mapped], paragraphs: [Mapped], lines: [Mapped], words: [Mapped]) {
        func mapped(_ box: Rect, bounds: Rect? = nil) -> Mapped {
            let corners = page.corners(box)
            let (a, b, c, d) = corners
            return Mapped(bounds: bounds ?? page.bounds(corners: corners),
                          polygon: (page.clampedX(a.x), page.clampedY(a.y), page.clampedX(b.x), page.clampedY(b.y),
                                    page.clampedX(c.x), page.clampedY(c.y), page.clampedX(d.x), page.clampedY(d.y)))
        }
        let result = page.result
        var blocks: [Mapped] = [], paragraphs: [Mapped] = [], lines: [Mapped] = [], words: [Mapped] = []
        blocks.reserveCapacity(result.blocks.count)
        words.reserveCapacity(page.wordCount)
        for block in result.blocks {
            var blockUnion: Rect?
            for paragraph in block.paragraphs {
                var paragraphUnion: Rect?
                for line in paragraph.lines {
                    var lineUnion: Rect?
                    for word in line.words {
                        let box = mapped(word.box)
                        words.append(box)
                        lineUnion = lineUnion?.union(box.bounds) ?? box.bounds
                    }
                    let lineBox = mapped(line.box, bounds: lineUnion)
                    lines.append(lineBox)
                    paragraphUnion = paragraphUnion?.union(lineBox.bounds) ?? lineBox.bounds
                }
                let paragraphBox = mapped(paragraph.box, bounds: paragraphUnion)
                paragraphs.append(paragraphBox)
                blockUnion = blockUnion?.union(paragraphBox.bounds) ?? paragraphBox.bounds
            }
            blocks.append(mapped(block.box, bounds: blockUnion))
        }
        return (blocks, paragraphs, lines, words)
    }

    /// Size of the original image (the recognized page's when the page was not corrected).
    public var imageWidth: Int { result.originalWidth ?? result.width }
    public var imageHeight: Int { result.originalHeight ?? result.height }

    /// The corners of a box in the original image (clockwise from top left).
    public func quad(_ box: Rect) -> Quad { result.originalQuad(of: box) }

    /// The corners of a box in the original image, as `quad(box)` has them (clockwise from top left), without
    /// making an array: called for every box of every format (render on demand renders them at export).
    @inline(__always)
    func corners(_ box: Rect) -> (Point, Point, Point, Point) {
        guard let toOriginal = result.toOriginal else {
            let x0 = Double(box.x), y0 = Double(box.y), x1 = Double(box.maxX), y1 = Double(box.maxY)
            return (Point(x0, y0), Point(x1, y0), Point(x1, y1), Point(x0, y1))
        }
        return PointMap(toOriginal).corners(box)
    }

    /// The bounding rectangle of a box in the original image, inside the image: the corners of `quad(box)`, in its
    /// order, with the comparisons of `Array.min()` and `max()`; allocates nothing.
    public func bounds(_ box: Rect) -> Rect { bounds(corners: corners(box)) }

    /// The bounding rectangle, inside the image, of a box's corners (`corners(_:)`).
    @inline(__always)
    func bounds(corners: (Point, Point, Point, Point)) -> Rect {
        let (a, b, c, d) = corners
        var minX = a.x, maxX = a.x, minY = a.y, maxY = a.y
        func include(_ corner: Point) {
            if corner.x < minX { minX = corner.x }
            if maxX < corner.x { maxX = corner.x }
            if corner.y < minY { minY = corner.y }
            if maxY < corner.y { maxY = corner.y }
        }
        include(b)
        include(c)
        include(d)
        let left = clampedX(minX), right = clampedX(maxX)
        let top = clampedY(minY), bottom = clampedY(maxY)
        return Rect(x: left, y: top, width: max(0, right - left), height: max(0, bottom - top))
    }

    /// `result` with each word's text without white space at its ends (`Scripts.trimmed`), words left with no text
    /// left out, and lines left with no words: the formats space words themselves, a word must have content (ALTO's
    /// CONTENT) and an ALTO line a String.
    static func trimmedWords(_ result: PageResult) -> PageResult {
        // Nearly every page has nothing to trim: it is then kept as it is, without copying its lines.
        let untouched = result.blocks.allSatisfy { block in
            block.paragraphs.allSatisfy { paragraph in
                paragraph.lines.allSatisfy { line in
                    !line.words.isEmpty && line.words.allSatisfy { Scripts.hasTrimmedASCIIEnds($0.text) }
                }
            }
        }
        if untouched { return result }
        var trimmed = result
        for b in trimmed.blocks.indices {
            for p in trimmed.blocks[b].paragraphs.indices {
                trimmed.blocks[b].paragraphs[p].lines = trimmed.blocks[b].paragraphs[p].lines.compactMap { line in
                    var line = line
                    line.words = line.words.compactMap { word in
                        var word = word
                        word.text = Scripts.trimmed(word.text)
                        return word.text.isEmpty ? nil : word
                    }
                    return line.words.isEmpty ? nil : line
                }
            }
        }
        return trimmed
    }

    /// `result` with every word box at least two pixels of the original image wide and high (grown about its
    /// center, inside the page): a speck read as a word on a photo taken from afar would otherwise shrink to a
    /// line or a point there, which is no polygon (PAGE) and no box.
    static func visibleWords(_ result: PageResult) -> PageResult {
        guard result.toOriginal != nil, result.width > 0, result.height > 0 else { return result }
        let page = result.originalQuad(of: Rect(x: 0, y: 0, width: result.width, height: result.height))
        let scale = (abs(page.area) / Double(result.width * result.height)).squareRoot()
        guard scale > 0 else { return result }
        let minimum = Int((2 / scale).rounded(.up))
        let large = result.blocks.allSatisfy { block in
            block.paragraphs.allSatisfy { paragraph in
                paragraph.lines.allSatisfy { line in line.words.allSatisfy { $0.box.width >= minimum && $0.box.height >= minimum } }
            }
        }
        if large { return result }
        var grown = result
        grown.updateLines { line in
            for index in line.words.indices {
                var box = line.words[index].box
                if box.width < minimum {
                    box.x = max(0, box.x - (minimum - box.width) / 2)
                    box.width = min(minimum, result.width - box.x)
                }
                if box.height < minimum {
                    box.y = max(0, box.y - (minimum - box.height) / 2)
                    box.height = min(minimum, result.height - box.y)
                }
                line.words[index].box = box
            }
        }
        return grown
    }

    /// The direction of a box's text in the original image, in degrees counterclockwise from the image's x axis in
    /// [0, 360): 0 on an upright page, 270 on a scan turned a quarter clockwise (its lines run down), a few
    /// degrees for a skewed scan. Taken from the map to the original image, so orientation, deskew and
    /// rectification all count; rounded to a tenth of a degree.
    public func textAngle(of box: Rect) -> Double {
        guard let toOriginal = result.toOriginal else { return 0 }
        let middle = Double(box.y) + Double(box.height) / 2
        let start = toOriginal.apply(Point(Double(box.x), middle)), end = toOriginal.apply(Point(Double(box.maxX), middle))
        // y runs down in images: a line running up the image has a positive angle.
        let degrees = atan2(start.y - end.y, end.x - start.x) * 180 / .pi
        let tenths = Int((degrees * 10).roundedHalfAway)
        return Double(((tenths % 3600) + 3600) % 3600) / 10
    }

    /// The text direction of the whole page (`textAngle` of the recognized page).
    public var textAngle: Double { textAngle(of: Rect(x: 0, y: 0, width: max(1, result.width), height: max(1, result.height))) }

    /// Pixels per inch of the original image, the one the boxes are in: the resolution its file declared, else
    /// the recognized image's resolution carried back through the map's scale; 0 when neither is known.
    public var originalResolution: Int {
        if let declared = result.findings["decode"]?["resolution"]?.intValue, declared > 0 { return declared }
        guard result.resolution > 0 else { return 0 }
        guard result.toOriginal != nil else { return result.resolution }
        let page = quad(Rect(x: 0, y: 0, width: max(1, result.width), height: max(1, result.height)))
        let scale = (abs(page.area) / Double(max(1, result.width) * max(1, result.height))).squareRoot()
        return Int((Double(result.resolution) * scale).rounded())
    }

    /// Whether the boxes are turned or warped in the original image (a rectangle is not exact there).
    public var isWarped: Bool { result.toOriginal.map { !$0.isAxisAligned } ?? false }

    /// The page's main language as ISO 639-2 (Tesseract codes are mostly that already).
    public var language: String {
        let code = languages.first ?? "eng"
        return code.split(separator: "_").first.map(String.init) ?? code
    }

    /// A coordinate of the original image as a whole pixel inside it.
    func clampedX(_ value: Double) -> Int { min(imageWidth, max(0, Int(value.roundedHalfAway))) }
    func clampedY(_ value: Double) -> Int { min(imageHeight, max(0, Int(value.roundedHalfAway))) }
}

extension Homography {
    /// True when the map only scales and translates (boxes stay upright rectangles).
    var isAxisAligned: Bool {
        let m = self.m
        return abs(m[1]) < 1e-9 && abs(m[3]) < 1e-9 && abs(m[6]) < 1e-12 && abs(m[7]) < 1e-12
    }
}

/// A homography's nine numbers held apart (`Homography.m` is an array, read through a call per point): the
/// renderers map every box of a page, four corners each. `apply` computes what `Homography.apply` does, in the same
/// order, so the points are the same doubles.
struct PointMap {
    let m0, m1, m2, m3, m4, m5, m6, m7, m8: Double

    init(_ homography: Homography) {
        let m = homography.m
        (m0, m1, m2, m3, m4, m5, m6, m7, m8) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
    }

    @inline(__always)
    func apply(_ x: Double, _ y: Double) -> Point {
        let w = m6 * x + m7 * y + m8
        return Point((m0 * x + m1 * y + m2) / w, (m3 * x + m4 * y + m5) / w)
    }

    /// A box's corners, clockwise from top left (`ExportPage.corners`).
    @inline(__always)
    func corners(_ box: Rect) -> (Point, Point, Point, Point) {
        let x0 = Double(box.x), y0 = Double(box.y), x1 = Double(box.maxX), y1 = Double(box.maxY)
        return (apply(x0, y0), apply(x1, y0), apply(x1, y1), apply(x0, y1))
    }
}
