import Testing
import FarmCore
@testable import FarmRender

/// Where the original image and the recognized page's words go on the PDF page (`PDFPlacement`).
@Suite("PDF placement of the original image")
struct PDFPlacementTests {
    /// `point` (pixels) mapped by `map` and rounded to thousandths of a point.
    func mapped(_ map: Homography, _ x: Double, _ y: Double) -> [Double] {
        let p = map.apply(Point(x, y))
        return [(p.x * 1000).rounded() / 1000, (p.y * 1000).rounded() / 1000]
    }

    func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

    @Test("a scan turned a quarter clockwise: the page is the upright size, the image turned back, words on the original's words")
    func turned() {
        // Original 480 × 640 at 200 dpi, its text running down; orient turned it into a 640 × 480 recognized page:
        // recognized (x, y) ↔ original (480 - y, x).
        let toOriginal = Homography([0, -1, 480, 1, 0, 0, 0, 0, 1])
        let placement = PDFPlacement(imageWidth: 480, imageHeight: 640, referenceWidth: 480, referenceHeight: 640,
                                     recognizedToReference: toOriginal, recognizedWidth: 640, recognizedHeight: 480,
                                     resolution: 200)
        #expect(placement.quarterTurns == 1)
        #expect(rounded(placement.width) == 230.4 && rounded(placement.height) == 172.8)
        // The recognized page's top left is the top left of the upright page (PDF y up: 172.8).
        #expect(mapped(placement.words, 0, 0) == [0, 172.8])
        #expect(mapped(placement.words, 640, 480) == [230.4, 0])
        // The image's unit square: its top-left pixel (0, 1 in image space), the upright page's bottom left, shows there.
        #expect(mapped(placement.image, 0, 1) == [0, 0])
        #expect(mapped(placement.image, 1, 0) == [230.4, 172.8])
    }

    @Test("upright and unscaled: the page is the image at its resolution, words at their pixels")
    func upright() {
        let placement = PDFPlacement(imageWidth: 2480, imageHeight: 3508, recognizedWidth: 2480, recognizedHeight: 3508,
                                     resolution: 300)
        #expect(placement.quarterTurns == 0)
        #expect(rounded(placement.width) == 595.2 && rounded(placement.height) == 841.92)
        #expect(mapped(placement.words, 300, 300) == [72, 769.92])
        #expect(placement.image.pdfMatrix == "595.2 0 0 841.92 0 0")
    }

    @Test("EXIF orientations map stored pixels to the picture as shown")
    func exif() {
        // Orientation 6: stored 400 × 300, shown 300 × 400 turned a quarter clockwise: stored top left at shown top right.
        #expect(mapped(PDFPlacement.exifMap(6, width: 400, height: 300), 0, 0) == [300, 0])
        #expect(mapped(PDFPlacement.exifMap(8, width: 400, height: 300), 0, 0) == [0, 400])
        #expect(mapped(PDFPlacement.exifMap(3, width: 400, height: 300), 0, 0) == [400, 300])
        #expect(PDFPlacement.exifMap(1, width: 400, height: 300) == .identity)
    }

    @Test("a word on a skewed scan is set upright through the middle of its slanted baseline")
    func skewedWord() {
        // 3° clockwise skew about the origin, no scale.
        let map = SearchablePDF.LayerMap(scale: 1, height: 1000, words: .rotation(3 * .pi / 180).then(.scale(1, -1)).then(.translation(0, 1000)))
        let word = map.matrix(left: 100, right: 200, baseline: 500, top: 520)
        #expect(word.linear == "1 0 0 1")
        let start = map.page(100, 500), end = map.page(200, 500)
        #expect(abs(word.origin.y - (start.y + end.y) / 2) < 1e-9)
    }
}

@Suite("pdf_image in the page options")
struct PDFImageOptionTests {
    @Test("pdf_image is stored with the options: absent by default (original for scans, corrected for photos), kept when set")
    func options() {
        #expect(PageOptions().json["pdf_image"] == nil)
        #expect(PageOptions(json: PageOptions().json).pdfImage == nil)
        var options = PageOptions()
        options.pdfImage = .corrected
        #expect(options.json["pdf_image"]?.stringValue == "corrected")
        #expect(PageOptions(json: options.json).pdfImage == .corrected)
        #expect(PageOptions(json: .object([("pdf_image", "sideways")])).pdfImage == nil)
    }
}
