import Testing
import FarmCore
@testable import FarmPipeline
import Leptonica
import TestSupport

@Suite("Dewarp stage")
struct DewarpTests {
    /// A book page photographed open (boston_cooking_a from page_dewarp, 0.6×), with its text typed by hand.
    static let curved = Fixtures.path("curved/boston_cooking_a.jpg")
    static var curvedTruth: String {
        (try? String(contentsOfFile: Fixtures.path("curved/boston_cooking_a.gt.txt"), encoding: .utf8)) ?? ""
    }

    /// The page through every seeing stage (or every one but dewarp), read by Tesseract.
    func read(_ path: String, dewarp: Bool) throws -> (text: String, context: PageContext) {
        let pipeline = PagePipeline(options: PipelineOptions(dewarp: dewarp))
        let page = DecodedPage(image: try Pix(contentsOfFile: path), format: .jpeg, declaredResolution: 0)
        let (image, context) = try pipeline.run(page)
        let text = try TesseractRecognizer().recognize(DecodedPage(image: image, format: .png, declaredResolution: 0),
                                                       options: RecognitionOptions()).text
        return (text, context)
    }

    func findings(_ context: PageContext) -> JSON? { context.findings.first { $0.0 == "dewarp" }?.1 }

    @Test("a curved book page reads with a lower CER dewarped than not")
    func curvedPage() throws {
        let (plain, plainContext) = try read(Self.curved, dewarp: false)
        let (dewarped, context) = try read(Self.curved, dewarp: true)
        #expect(findings(plainContext) == nil)
        let found = try #require(findings(context))
        #expect(found["applied"]?.boolValue == true, "\(found)")
        #expect(found["mapping"]?.stringValue == "approximate")
        #expect((found["bend"]?.doubleValue ?? 0) >= DewarpStage.minimumBend)
        let before = TextMetrics.characterErrorRate(reference: Self.curvedTruth, hypothesis: plain)
        let after = TextMetrics.characterErrorRate(reference: Self.curvedTruth, hypothesis: dewarped)
        // Measured: 18.8% → 0.4%. The line starts and ends at the top and bottom of the page are what dewarping
        // recovers, so the margin is wide.
        #expect(after < 0.03, "dewarped CER \(after)")
        #expect(before - after > 0.08, "CER \(before) → \(after)")
    }

    @Test("a curved page whose full-size disparity would not fit the page memory budget is left as it is")
    func overBudget() throws {
        let image = try Pix(contentsOfFile: Self.curved)
        var page = DecodedPage(image: image, format: .jpeg, declaredResolution: 0)
        // Room for the page itself, not for Leptonica's disparity arrays (32 bytes per pixel).
        page.memoryBudget = image.width * image.height * 8
        let (_, context) = try PagePipeline(options: PipelineOptions(scale: false, enhance: false)).run(page)
        let found = try #require(findings(context))
        #expect(found["applied"]?.boolValue == false, "\(found)")
        #expect(found["reason"]?.stringValue == "over the page memory budget", "\(found)")
    }

    /// phototest has too few lines for a model; the smartdoc15 frame (a flat two-column paper photographed on a
    /// desk) has one, which measures flat (bend 0.17 line pitches).
    @Test("a flat scan passes the stage unchanged", arguments: [
        ("tesseract-testdata/phototest.tif", false), ("smartdoc15/background01_paper001_frame_0099.jpeg", true),
    ])
    func flatPage(_ name: String, hasModel: Bool) throws {
        var seen: [String: Pix] = [:]
        let pipeline = PagePipeline(options: PipelineOptions())
        let image = try Pix(contentsOfFile: Fixtures.path(name))
        let (_, context) = try pipeline.run(DecodedPage(image: image, format: .png, declaredResolution: 0)) { stage, image in
            seen[stage] = image
        }
        let found = try #require(findings(context))
        #expect(found["applied"]?.boolValue == false, "\(found)")
        #expect(found["mapping"] == nil)
        #expect((found["bend"] != nil) == hasModel, "\(found)")
        if hasModel { #expect(found["reason"]?.stringValue == "flat") }
        let before = try #require(seen["deskew"]), after = try #require(seen["dewarp"])
        #expect(after.hasSamePixels(as: before))
    }

    @Test("a flat page of many lines builds a model that measures far below the bend threshold")
    func flatModel() throws {
        // eurotext's lines tiled three times down the page: enough long lines for a model, all of them straight.
        let text = try Pix(contentsOfFile: Fixtures.path("tesseract-testdata/eurotext.tif")).grayscale()
        var source = try text.grayPixels()
        let band = source.height
        var tall = GrayPixels(width: source.width, height: band * 3, value: 255)
        for copy in 0..<3 { for y in 0..<band { for x in 0..<source.width { tall[x, copy * band + y] = source[x, y] } } }
        source = tall
        let page = try Pix(gray: source)
        let model = try page.binarized(threshold: 130).dewarpModel().get()
        #expect(model.lines >= 15)
        #expect(model.linePitch > 0)
        #expect(model.bend / model.linePitch < DewarpStage.minimumBend / 3, "bend \(model.bend) pitch \(model.linePitch)")
        var context = PageContext(originalWidth: page.width, originalHeight: page.height, resolution: 0)
        let out = try DewarpStage().run(page, &context)
        #expect(findings(context)?["applied"]?.boolValue == false)
        #expect(out.hasSamePixels(as: page))
    }

    @Test("a page with too little text is left as it is, with the reason")
    func littleText() throws {
        let page = try Pix(contentsOfFile: Fixtures.phototest).grayscale()
        let strip = try page.cropped(to: Box(x: 0, y: 0, width: page.width, height: page.height / 4))
        for image in [strip, try Pix(width: 800, height: 1000, depth: 8)] {
            var context = PageContext(originalWidth: image.width, originalHeight: image.height, resolution: 0)
            let out = try DewarpStage().run(image, &context)
            let found = try #require(findings(context))
            #expect(found["applied"]?.boolValue == false)
            let reason = found["reason"]?.stringValue ?? ""
            #expect(!reason.isEmpty, "\(found)")
            #expect(found["lines"] == nil)
            #expect(out.hasSamePixels(as: image))
            #expect(context.toPage == .identity)
        }
    }

    @Test("--skip dewarp leaves the stage out")
    func skipped() {
        #expect(CorrectionStage.allCases.contains(.dewarp))
        let options = PipelineOptions(PageOptions(skippedStages: [.dewarp]))
        #expect(!options.dewarp)
        #expect(!PagePipeline(options: options).stages.contains { $0.name == "dewarp" })
        #expect(PagePipeline(options: PipelineOptions()).stages.map(\.name)
                == ["segment", "rectify", "orient", "deskew", "dewarp", "enhance", "scale"])
        #expect(!PipelineOptions.none.dewarp)
    }
}
