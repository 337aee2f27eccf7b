import Testing
import FarmCore
@testable import FarmPipeline
import Leptonica
import Tesseract
import TestSupport

@Suite("Seeing the page: segment, orient, enhance on real images")
struct SeeingTests {
    static let frames = ["background01_letter001_frame_0098", "background01_magazine001_frame_0107"]

    func truth(_ frame: String) throws -> Quad {
        let json = try JSON.parse(try Fixtures.read("smartdoc15/\(frame).json"))
        let points = try #require(json["corners"]?.arrayValue).map { pair in
            Point(pair.arrayValue?[0].doubleValue ?? 0, pair.arrayValue?[1].doubleValue ?? 0)
        }
        return Quad(points)
    }

    @Test("segment finds the page in a real camera frame (SmartDoc 2015) with IoU ≥ 0.95", arguments: frames)
    func segmentPhoto(frame: String) throws {
        let image = try Pix(contentsOfFile: Fixtures.path("smartdoc15/\(frame).jpeg"))
        var context = PageContext(originalWidth: image.width, originalHeight: image.height, resolution: 0)
        _ = try SegmentStage().run(image, &context)
        let found = try #require(context.document)
        let iou = found.corners.iou(with: try truth(frame))
        #expect(iou >= 0.95, "IoU \(iou): \(found.corners)")
        #expect(!found.isFullFrame)
        #expect(found.confidence > 0.5)
        // The corners are reported in tl, tr, br, bl order.
        let c = found.corners.corners
        #expect(c[0].x < c[1].x && c[3].x < c[2].x && c[0].y < c[3].y && c[1].y < c[2].y)
        // Rectified, the page is upright and about A4-shaped (1:√2).
        let flat = try RectifyStage().run(image, &context)
        let aspect = Double(flat.width) / Double(flat.height)
        #expect(abs(aspect - 1 / 2.0.squareRoot()) < 0.06, "aspect \(aspect)")
    }

    @Test("a flat scan is the page: full frame, and rectify leaves it as it is")
    func flatScan() throws {
        let page = try Pix(contentsOfFile: Fixtures.path("tesseract-testdata/eurotext.tif"))
        var context = PageContext(originalWidth: page.width, originalHeight: page.height, resolution: 0)
        _ = try SegmentStage().run(page, &context)
        #expect(context.document?.isFullFrame == true)
        let out = try RectifyStage().run(page, &context)
        #expect(out.width == page.width && out.height == page.height)
        #expect(context.toPage == .identity)
    }

    @Test("no document in the picture: the page goes on uncropped with a low confidence")
    func noDocument() throws {
        // A photo of an empty desk: smooth shading, no edges.
        var pixels = GrayPixels(width: 800, height: 600, value: 0)
        for y in 0..<600 { for x in 0..<800 { pixels[x, y] = UInt8(90 + (x + y) / 20) } }
        let desk = try Pix(gray: pixels)
        var context = PageContext(originalWidth: 800, originalHeight: 600, resolution: 0)
        _ = try SegmentStage().run(desk, &context)
        let out = try RectifyStage().run(desk, &context)
        #expect((context.document?.confidence ?? 1) < 0.5)
        #expect(out.width == 800 && out.height == 600)
    }

    @Test("orient: letter shapes turn phototest upright from every quarter turn, even with OSD not trusted",
          arguments: [0, 1, 2, 3])
    func letterShapes(turns: Int) throws {
        let page = try Pix(contentsOfFile: Fixtures.phototest)
        let turned = try page.rotatedOrthogonally(quarterTurns: turns)
        // A threshold no OSD confidence reaches: only the letter shapes can act.
        let stage = OrientStage(detector: try OrientationDetector(), threshold: 1_000)
        var context = PageContext(originalWidth: turned.width, originalHeight: turned.height, resolution: 0)
        let upright = try stage.run(turned, &context)
        let found = try #require(context.findings.first { $0.0 == "orient" }?.1)
        #expect(found["rotation"]?.intValue == ((4 - turns) % 4) * 90, "\(found)")
        #expect(found["method"]?.stringValue == "letter-shapes")
        #expect(upright.width == page.width && upright.height == page.height)
        #expect(try upright.textOrientationEvidence().up > OrientStage.decisiveEvidence)
    }

    @Test("orient: the OSD engine is loaded only when letter shapes cannot decide (English: never; Chinese: yes)")
    func osdOnlyWhenNeeded() throws {
        let page = try Pix(contentsOfFile: Fixtures.phototest)
        let english = LazyOrientationDetector()
        var context = PageContext(originalWidth: page.width, originalHeight: page.height, resolution: 0)
        _ = try OrientStage(detector: english, threshold: OrientStage.defaultThreshold).run(page, &context)
        #expect(context.findings.first { $0.0 == "orient" }?.1["method"]?.stringValue == "letter-shapes")
        #expect(!english.isLoaded)
        let chinese = LazyOrientationDetector()
        var cjk = PageContext(originalWidth: page.width, originalHeight: page.height, resolution: 0)
        cjk.languages = ["chi_sim"]
        _ = try OrientStage(detector: chinese, threshold: OrientStage.defaultThreshold).run(page, &cjk)
        #expect(chinese.isLoaded)
    }

    @Test("orient: the decision from letter-shape evidence", arguments: [
        (40.0, -6.0, 0), (-39.0, 5.0, 2), (-7.5, -32.0, 3), (5.0, 41.0, 1), (4.6, -0.8, nil), (10.0, 9.0, nil),
    ] as [(Double, Double, Int?)])
    func decision(up: Double, left: Double, expected: Int?) {
        #expect(OrientStage.turns(up: up, left: left) == expected)
    }

    @Test("enhance flattens a shadow across the page and keeps the text dark and readable")
    func enhanceShadow() throws {
        let page = try Pix(contentsOfFile: Fixtures.phototest).grayscale()
        // A shadow falling from the left: paper goes from 90 to 255, ink stays proportionally dark.
        var pixels = try page.grayPixels()
        for y in 0..<pixels.height {
            for x in 0..<pixels.width {
                let light = 0.35 + 0.65 * Double(x) / Double(pixels.width)
                pixels[x, y] = UInt8(Double(pixels[x, y]) * light)
            }
        }
        let shaded = try Pix(gray: pixels)
        var context = PageContext(originalWidth: shaded.width, originalHeight: shaded.height, resolution: 0)
        let flat = try EnhanceStage(mode: .gray).run(shaded, &context)
        let out = try flat.grayPixels()
        // Paper: the brightest tenth of a strip at the left and at the right edge are both near white.
        func paper(_ columns: Range<Int>) -> Int {
            var values: [UInt8] = []
            for y in 0..<out.height { for x in columns { values.append(out[x, y]) } }
            values.sort()
            return Int(values[values.count / 2])
        }
        #expect(paper(20..<60) >= 235, "left paper \(paper(20..<60))")
        #expect(paper(580..<620) >= 235, "right paper \(paper(580..<620))")
        #expect(context.keptImage == nil)   // in gray mode what is read is what is kept
        let text = try TesseractRecognizer().recognize(DecodedPage(image: flat, format: .png, declaredResolution: 0),
                                                       options: RecognitionOptions()).text
        #expect(TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: text) < 0.03, "\(text)")
    }

    @Test("a bright box printed on a page that fills the picture is not taken for the page")
    func boxOnPage() throws {
        // A scan of text on grayish paper with a white ruled box around part of it (a form field, a label).
        let text = try Pix(contentsOfFile: Fixtures.path("tesseract-testdata/eurotext.tif")).grayscale()
        var pixels = try text.grayPixels()
        let (w, h) = (pixels.width, pixels.height)
        let box = (x0: w * 3 / 10, y0: h * 3 / 10, x1: w * 3 / 4, y1: h * 7 / 10)
        for y in 0..<h {
            for x in 0..<w where !(box.x0..<box.x1 ~= x && box.y0..<box.y1 ~= y) {
                pixels[x, y] = UInt8(Double(pixels[x, y]) * 0.75)
            }
        }
        let page = try Pix(gray: pixels).rgb()
        let corners = [PixelPoint(x: Double(box.x0), y: Double(box.y0)), PixelPoint(x: Double(box.x1), y: Double(box.y0)),
                       PixelPoint(x: Double(box.x1), y: Double(box.y1)), PixelPoint(x: Double(box.x0), y: Double(box.y1))]
        for i in 0..<4 { page.drawLine(from: corners[i], to: corners[(i + 1) % 4], width: 3, red: 0, green: 0, blue: 0) }
        var context = PageContext(originalWidth: w, originalHeight: h, resolution: 0)
        _ = try SegmentStage().run(page, &context)
        let taken = context.document.map { "\($0.corners.corners.map { ($0.x, $0.y) })" } ?? "nothing"
        let full = context.document?.isFullFrame ?? false
        #expect(full, "took \(taken) for the page")
    }
}
