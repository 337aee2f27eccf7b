import Testing
import FarmCore
@testable import FarmPipeline
import Leptonica
import TestSupport

@Suite("Page stages")
struct StageTests {
    let page: Pix

    init() throws { page = try Pix(contentsOfFile: Fixtures.phototest).grayscale() }

    /// The centroid of the dark pixels: a mark the tests follow through a transform.
    func mark(_ image: Pix) throws -> Point {
        let pixels = try image.grayPixels()
        var sum = Point(0, 0), weight = 0.0
        for y in 0..<pixels.height {
            for x in 0..<pixels.width where pixels[x, y] < 200 {
                let w = Double(255 - Int(pixels[x, y]))
                sum = sum + Point(Double(x) + 0.5, Double(y) + 0.5) * w
                weight += w
            }
        }
        return sum * (1 / weight)
    }

    func marked(width: Int, height: Int, at p: (Int, Int)) throws -> Pix {
        var pixels = GrayPixels(width: width, height: height, value: 255)
        for dy in 0..<3 { for dx in 0..<3 { pixels[p.0 + dx, p.1 + dy] = 0 } }
        pixels[p.0 + 1, p.1 + 1] = 0
        return try Pix(gray: pixels)
    }

    @Test("quarter turns: the coordinate map follows the pixels", arguments: [1, 2, 3])
    func quarterTurns(turns: Int) throws {
        let image = try marked(width: 200, height: 120, at: (30, 80))
        let turned = try image.rotatedOrthogonally(quarterTurns: turns)
        let map = OrientStage.quarterTurns(turns, width: 200, height: 120)
        let predicted = map.apply(try mark(image))
        #expect(predicted.distance(to: try mark(turned)) < 1.5, "turns \(turns)")
    }

    @Test("deskew rotation: the coordinate map follows the pixels")
    func deskewMap() throws {
        let image = try marked(width: 400, height: 300, at: (320, 60))
        let rotated = try image.rotated(byDegrees: 7)
        let map = DeskewStage.rotation(degrees: 7, from: image, to: rotated)
        #expect(map.apply(try mark(image)).distance(to: try mark(rotated)) < 3)
    }

    @Test("deskew straightens a page turned by 4 degrees and records the angle")
    func deskew() throws {
        let skewed = try page.rotated(byDegrees: 4)
        var context = PageContext(originalWidth: skewed.width, originalHeight: skewed.height, resolution: 0)
        let straight = try DeskewStage().run(skewed, &context)
        let found = context.findings.first { $0.0 == "deskew" }?.1
        #expect(abs(abs(found?["angle"]?.doubleValue ?? 0) - 4) < 0.5)
        #expect(found?["applied"]?.boolValue == true)
        #expect(try straight.skewAngle().map { abs($0.angle) } ?? 9 < 0.3)
        #expect(context.toPage != .identity)
    }

    @Test("rectification of a page photographed at an angle recovers it, and points map back")
    func rectify() throws {
        // Make a "photo": the page projected into a quadrilateral on a 700 × 560 canvas.
        let quad = [Point(60, 40), Point(620, 70), Point(650, 520), Point(30, 480)]
        let pageCorners = Quad(width: Double(page.width), height: Double(page.height)).corners
        let canvasToPage = try #require(Homography.mapping(from: quad, to: pageCorners))
        let canvasCorners = Quad(width: 700, height: 560).corners.map { canvasToPage.apply($0) }
        let photo = try page.rectified(corners: canvasCorners.map { PixelPoint(x: $0.x, y: $0.y) }, width: 700, height: 560)

        var context = PageContext(originalWidth: 700, originalHeight: 560, resolution: 0)
        context.document = DocumentDetection(corners: Quad(quad), confidence: 0.9, isFullFrame: false,
                                             mask: GrayPixels(width: 1, height: 1), imageWidth: 700, imageHeight: 560)
        let flat = try RectifyStage().run(photo, &context)
        // The true page is 640 × 480 (4:3); the aspect is recovered within a few percent.
        let aspect = Double(flat.width) / Double(flat.height)
        #expect(abs(aspect - 4.0 / 3.0) < 0.08, "aspect \(aspect)")
        // Corrected-page corners map back onto the quadrilateral in the photo.
        #expect(context.toOriginal.apply(Point(0, 0)).distance(to: quad[0]) < 1)
        #expect(context.toOriginal.apply(Point(Double(flat.width), Double(flat.height))).distance(to: quad[2]) < 1)
        // And the text reads again.
        let text = try TesseractRecognizer().recognize(DecodedPage(image: flat, format: .png, declaredResolution: 0),
                                                       options: RecognitionOptions()).text
        #expect(TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: text) < 0.05, "\(text)")
    }

    @Test("the aspect ratio of a frontal rectangle is its side ratio")
    func aspect() {
        let quad = Quad([Point(100, 100), Point(1100, 100), Point(1100, 1514), Point(100, 1514)])
        #expect(abs(RectifyStage.aspectRatio(of: quad, imageWidth: 1200, imageHeight: 1600) - 1000.0 / 1414.0) < 0.01)
    }

    @Test("text size: the x-height of phototest's 12 pt text is found")
    func textSize() throws {
        let estimate = try #require(try TextSize.estimate(page))
        // phototest.tif is 12 pt at 200 dpi: x-height about 15–18 px.
        #expect(estimate.xHeight > 12 && estimate.xHeight < 20, "\(estimate)")
        let half = try #require(try TextSize.estimate(try page.scaled(by: 0.5)))
        #expect(abs(half.xHeight * 2 - estimate.xHeight) < 2)
        #expect(try TextSize.estimate(try Pix(width: 300, height: 300, depth: 8)) == nil)
    }

    @Test("EXIF orientation is read from a JPEG's APP1 block")
    func exif() throws {
        let jpeg = try page.encoded(as: .jpeg)
        #expect(EXIF.orientation(of: jpeg) == nil)
        // Splice an APP1 Exif block with orientation 6 (little-endian TIFF) after SOI.
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00,
                             0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00,
                             0x00, 0x00, 0x00, 0x00]
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        let app1: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        let rotated = [jpeg[0], jpeg[1]] + app1 + jpeg[2...]
        #expect(EXIF.orientation(of: Array(rotated)) == 6)
        let decoded = try Decoder.decode(Array(rotated))
        #expect(decoded.exifOrientation == 6)
        #expect(decoded.image.width == page.height && decoded.image.height == page.width)
    }
}
