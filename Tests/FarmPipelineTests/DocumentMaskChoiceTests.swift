import Testing
@testable import FarmCore
@testable import FarmPipeline
import Leptonica
import TestSupport

/// The learned mask in default detection (issue 39; DocumentMask+Choice.swift): the segment stage with the installed
/// document mask against the detector alone, on composited photos of a busy desk (Tests/Fixtures/cluttered), a flat
/// scan, and without the model. Needs Scripts/install-neural (the runtime and the mask); a missing install fails.
@Suite("Document mask in detection: the mask's outline where the detector is unsure, or sure of a quadrilateral the mask leaves mostly empty")
struct DocumentMaskChoiceTests {
    /// Composites of decision 0096's clear set (Tests/Fixtures/README.md, `cluttered/`): a page on a stack of printed
    /// sheets among toys, a cable and a pen; a page on another page on a carpet with two pens. (The third, a receipt
    /// on another sheet with a cable across it, the detector alone now finds: `DetectionTests.eitherSense`.)
    static let photos = ["heldout-3939-046", "train-4141-097"]

    /// The true corners in a fixture's `.json` (`cluttered/NAME.json`, `midv500/NAME.json`).
    static func truth(_ file: String) throws -> Quad {
        let json = try JSON.parse(try Fixtures.read(file))
        return Quad(try #require(json["corners"]?.arrayValue).map { pair in
            Point(pair.arrayValue?[0].doubleValue ?? 0, pair.arrayValue?[1].doubleValue ?? 0)
        })
    }

    static func segment(_ image: Pix, mask: LazyDocumentMask?) throws -> (DocumentDetection, JSON) {
        var context = PageContext(originalWidth: image.width, originalHeight: image.height, resolution: 0)
        _ = try SegmentStage(documentMask: mask).run(image, &context)
        let findings = try #require(context.findings.first { $0.0 == "segment" }?.1)
        return (try #require(context.document), findings)
    }

    @Test("on a busy desk where the detector alone keeps the frame (IoU < 0.5), the mask's outline is taken: IoU ≥ 0.9 at confidence ≥ 0.5",
          arguments: photos)
    func busyDesk(name: String) throws {
        let image = try Pix(contentsOfFile: Fixtures.path("cluttered/\(name).jpg"))
        let truth = try Self.truth("cluttered/\(name).json")
        let width = Double(image.width), height = Double(image.height)
        let (alone, _) = try Self.segment(image, mask: nil)
        let aloneIoU = alone.corners.iou(with: truth, inFrameWidth: width, height: height)
        // Today's detector (the stage without the mask) misses: the whole frame.
        #expect(alone.isFullFrame && aloneIoU < 0.5, "the detector alone: IoU \(aloneIoU), \(alone.corners)")
        let mask = LazyDocumentMask()
        let (found, findings) = try Self.segment(image, mask: mask)
        let iou = found.corners.iou(with: truth, inFrameWidth: width, height: height)
        #expect(!found.isFullFrame && found.confidence >= RectifyStage.minimumConfidence && iou >= 0.9,
                "with the mask: IoU \(iou) at \(found.confidence), \(found.corners); \(findings)")
        #expect(findings["document_mask"]?["chosen"]?.stringValue == "mask", "\(findings)")
        #expect(mask.isLoaded)
        // The photo that loaded the model says how long that took; the next one on the same slot does not.
        #expect((findings["document_mask"]?["loaded_ms"]?.doubleValue ?? -1) > 0, "\(findings)")
        let (_, again) = try Self.segment(image, mask: mask)
        #expect(again["document_mask"]?["chosen"]?.stringValue == "mask" && again["document_mask"]?["loaded_ms"] == nil,
                "\(again)")
    }

    /// Decision 0104's photo: a page on a stack of sheets whose dark rim the detector's second look outlines as a
    /// strip, sure of its sharp sides (0.82), though the mask reads none of it as document.
    @Test("a sure detector's outline the mask leaves nearly empty gives way: a page on a dark-rimmed stack is cropped to the page, not a strip of the rim")
    func sureDetectorEmptyQuad() throws {
        let image = try Pix(contentsOfFile: Fixtures.path("cluttered/heldout-3939-087.jpg"))
        let truth = try Self.truth("cluttered/heldout-3939-087.json")
        let width = Double(image.width), height = Double(image.height)
        let (alone, _) = try Self.segment(image, mask: nil)
        let aloneIoU = alone.corners.iou(with: truth, inFrameWidth: width, height: height)
        #expect(!alone.isFullFrame && alone.confidence >= RectifyStage.minimumConfidence && aloneIoU < 0.1,
                "the detector alone: IoU \(aloneIoU) at \(alone.confidence), \(alone.corners)")
        let (found, findings) = try Self.segment(image, mask: LazyDocumentMask())
        let filled = findings["document_mask"]?["detector_filled"]?.doubleValue ?? 1
        #expect(filled < DocumentMask.sureDetectorFilled, "\(findings)")
        let iou = found.corners.iou(with: truth, inFrameWidth: width, height: height)
        #expect(!found.isFullFrame && found.confidence >= RectifyStage.minimumConfidence && iou >= 0.95,
                "with the mask: IoU \(iou) at \(found.confidence), \(found.corners); \(findings)")
        #expect(findings["document_mask"]?["chosen"]?.stringValue == "mask", "\(findings)")
    }

    @Test("a flat scan is not shown to the mask: the model is not even loaded, and the detection is the detector's")
    func flatScanSkipped() throws {
        let image = try Pix(contentsOfFile: Fixtures.path("tesseract-testdata/phototest.tif"))
        let mask = LazyDocumentMask()
        let (found, findings) = try Self.segment(image, mask: mask)
        let (alone, aloneFindings) = try Self.segment(image, mask: nil)
        #expect(found.isFullFrame && alone.isFullFrame)
        #expect(findings["document_mask"]?["skipped"] != nil, "\(findings)")
        #expect(!mask.isLoaded)
        var without = findings
        if case .object(let fields) = findings { without = .object(fields.filter { $0.0 != "document_mask" }) }
        #expect(without == aloneFindings)
    }

    @Test("scans and page crops are not shown to the mask: a bilevel magazine spread (which the mask would crop to one page) and every page fixture keep the detector's answer",
          arguments: ["tesseract-testdata/8071_093.3B.tif", "pubtabnet/PMC1626454_002_00.png",
                      "pubtabnet/PMC5134617_013_00.png", "docbank/bar-quenching-12.jpg"])
    func scansKeepTheFrame(path: String) throws {
        let image = try Pix(contentsOfFile: Fixtures.path(path))
        let mask = LazyDocumentMask()
        let (found, findings) = try Self.segment(image, mask: mask)
        let (alone, _) = try Self.segment(image, mask: nil)
        #expect(found.isFullFrame && alone.isFullFrame && found.corners == alone.corners, "\(findings)")
        #expect(findings["document_mask"]?["skipped"] != nil, "\(findings)")
        #expect(!mask.isLoaded)
    }

    @Test("what is not shown to the mask: gray or bilevel images, images under 480 px, strips wider than 2.4 to 1")
    func domain() throws {
        let detection = DocumentDetection(corners: Quad(width: 238, height: 59), confidence: 0.3, isFullFrame: true,
                                          mask: GrayPixels(width: 10, height: 10), imageWidth: 238, imageHeight: 59)
        func reason(_ width: Int, _ height: Int, depth: Int) throws -> String? {
            LazyDocumentMask.notForTheMask(detection, image: try Pix(width: width, height: height, depth: depth))
        }
        #expect(try reason(238, 59, depth: 32)?.contains("238×59") == true)
        #expect(try reason(1300, 500, depth: 32) != nil)
        #expect(try reason(1200, 600, depth: 32) == nil)
        #expect(try reason(1200, 600, depth: 8)?.contains("8 bits") == true)
        #expect(try reason(1200, 600, depth: 1) != nil)
        #expect(try reason(470, 400, depth: 32) != nil)
    }

    @Test("without the model the detector's answer stands, and the findings say why (naming Scripts/install-neural)")
    func unavailable() throws {
        let image = try Pix(contentsOfFile: Fixtures.path("cluttered/heldout-3939-002.jpg"))
        let empty = TemporaryDirectory("no-neural")
        let (alone, _) = try Self.segment(image, mask: nil)
        for (environment, says) in [(["OCRFARM_NEURAL_DIR": empty.path], "Scripts/install-neural"),
                                    ([DocumentMask.environmentKey: "off"], "off")] {
            let mask = LazyDocumentMask(environment: environment)
            let (found, findings) = try Self.segment(image, mask: mask)
            #expect(found.corners == alone.corners && found.confidence == alone.confidence)
            let reason = findings["document_mask"]?["unavailable"]?.stringValue ?? ""
            #expect(reason.contains(says), "\(findings)")
            #expect(!mask.isLoaded)
        }
    }

    @Test("OCRFARM_DOCUMENT_MASK: off is the detector alone; unset, empty or on is the installed model; a path that holds no model is named in the findings")
    func option() throws {
        #expect(LazyDocumentMask.ifEnabled(environment: [DocumentMask.environmentKey: "off"]) == nil)
        for setting in [nil, "", "on"] {
            var environment: [String: String] = [:]
            environment[DocumentMask.environmentKey] = setting
            let mask = try #require(LazyDocumentMask.ifEnabled(environment: environment), "\(String(describing: setting))")
            if case .failure(let unavailable) = mask.mask().mask {
                Issue.record("the installed mask for \(String(describing: setting)): \(unavailable.reason)")
            }
        }
        let missing = TemporaryDirectory("mask-option").file("no-such-mask.onnx")
        let named = try #require(LazyDocumentMask.ifEnabled(environment: [DocumentMask.environmentKey: missing]))
        let image = try Pix(contentsOfFile: Fixtures.path("cluttered/heldout-3939-002.jpg"))
        let (_, findings) = try Self.segment(image, mask: named)
        let reason = findings["document_mask"]?["unavailable"]?.stringValue ?? ""
        #expect(reason.contains(missing), "\(findings)")
    }

    @Test("the rule: a sure detector stands unless the mask leaves most of its quadrilateral empty; an unsure one whose quadrilateral the mask does not fill gives way; a weak choice keeps the frame")
    func rule() throws {
        let mask = GrayPixels(width: 100, height: 50)
        let card = Quad([Point(200, 100), Point(600, 100), Point(600, 300), Point(200, 300)])
        func detection(_ corners: Quad, confidence: Double, fullFrame: Bool) -> DocumentDetection {
            DocumentDetection(corners: corners, confidence: confidence, isFullFrame: fullFrame, mask: mask,
                              imageWidth: 800, imageHeight: 400)
        }
        let frame = Quad(width: 800, height: 400)
        let evidence = DocumentMask.Evidence(outline: card, detectorFilled: 0.25, maskFilled: 0.95, quadsIoU: 0.25,
                                             edgeSides: 3)
        // Unsure detector keeping the frame, mask fills a quarter of it: the mask's card.
        let unsure = DocumentMask.combined(detection(frame, confidence: 0.3, fullFrame: true), evidence)
        #expect(!unsure.isFullFrame && unsure.corners == card && unsure.confidence >= 0.5, "\(unsure.json)")
        // A sure detector's outline stands where the mask fills half of it or more (here 0.6)...
        let sureQuad = Quad([Point(100, 50), Point(700, 50), Point(700, 350), Point(100, 350)])
        var mostly = evidence
        mostly.detectorFilled = 0.6
        let sure = DocumentMask.combined(detection(sureQuad, confidence: 0.99, fullFrame: false), mostly)
        #expect(sure.corners == sureQuad && !sure.isFullFrame)
        mostly.detectorFilled = 0.5
        #expect(!DocumentMask.takesMask(detection(sureQuad, confidence: 0.99, fullFrame: false), mostly))
        // ...and gives way where less than half of it is document by the mask (decision 0104).
        let empty = DocumentMask.combined(detection(sureQuad, confidence: 0.99, fullFrame: false), evidence)
        #expect(empty.corners == card && !empty.isFullFrame && empty.confidence >= 0.5, "\(empty.json)")
        // A sure whole frame (a flat page: its border is paper) is the detector's, whatever the mask fills of it.
        #expect(!DocumentMask.takesMask(detection(frame, confidence: 0.9, fullFrame: true), evidence))
        // The mask filling the detector's frame: the frame stays.
        let full = DocumentMask.Evidence(outline: card, detectorFilled: 0.9, maskFilled: 0.95, quadsIoU: 0.25,
                                         edgeSides: 3)
        #expect(DocumentMask.combined(detection(frame, confidence: 0.3, fullFrame: true), full).isFullFrame)
        // A mask outline the mask does not fill, no agreement: too weak, the frame is kept with it as candidate.
        // (The fitted model trusts the mask's outline little beyond what the mask fills: at 0.1 filled it is 0.53.)
        let weak = DocumentMask.Evidence(outline: card, detectorFilled: 0.2, maskFilled: 0, quadsIoU: 0, edgeSides: 3)
        let kept = DocumentMask.combined(detection(frame, confidence: 0.3, fullFrame: true), weak)
        #expect(kept.isFullFrame && kept.confidence < 0.5 && kept.candidate == card, "\(kept.json)")
        // The mask's card as before, but none of its sides on an edge the photo shows: the frame stays (decision 0100).
        var unseen = evidence
        unseen.edgeSides = 0
        #expect(!DocumentMask.takesMask(detection(frame, confidence: 0.3, fullFrame: true), unseen))
        let guessed = DocumentMask.combined(detection(frame, confidence: 0.3, fullFrame: true), unseen)
        #expect(guessed.isFullFrame && guessed.confidence < 0.5, "\(guessed.json)")
        // Two sides on edges, two the mask's guess: the frame stays too (decision 0101); three are enough.
        var half = evidence
        half.edgeSides = 2
        #expect(!DocumentMask.takesMask(detection(frame, confidence: 0.3, fullFrame: true), half))
        half.edgeSides = 3
        #expect(DocumentMask.takesMask(detection(frame, confidence: 0.3, fullFrame: true), half))
        // A document the frame cuts: a side along the photo's border counts with those on edges, but not alone.
        half.edgeSides = 2
        half.frameSides = 1
        #expect(DocumentMask.takesMask(detection(frame, confidence: 0.3, fullFrame: true), half))
        half.edgeSides = 0
        half.frameSides = 4
        #expect(!DocumentMask.takesMask(detection(frame, confidence: 0.3, fullFrame: true), half))
    }

    @Test("a side runs along the photo's border when both its ends lie within a mask cell of the same border, or beyond it")
    func alongBorder() {
        // 1280 × 960: a cell is 10 px.
        let border = { (a: Point, b: Point) in DocumentMask.alongBorder(a, b, width: 1280, height: 960) }
        #expect(border(Point(3, 100), Point(-20, 800)))
        #expect(border(Point(100, 955), Point(1200, 970)))
        #expect(border(Point(1275, 0), Point(1279, 960)))
        #expect(border(Point(0, 4), Point(1280, 9)))
        #expect(!border(Point(3, 100), Point(40, 800)))
        #expect(!border(Point(0, 0), Point(1280, 960)))
        #expect(!border(Point(100, 100), Point(1100, 100)))
    }

    /// Decision 0100's photos: a page of card that fills the frame, a typed title on it with no paper edge in sight
    /// (DIBCO 2011 PR7, which the mask outlined as its last three lines), and a midv500 card held in a hand by a bag
    /// (31_08, outlined as the hand at IoU 0.55, confidently). Neither outline has a side on an edge of the photo.
    @Test("a mask outline with no side on an edge of the photo is not taken: DIBCO PR7 stays whole, midv500 31_08 is no confident miss",
          arguments: ["ocrd/PR7.png", "midv500/midv500_31_08.jpg"])
    func outlineWithoutEdges(path: String) throws {
        let image = try Pix(contentsOfFile: Fixtures.path(path))
        let (found, findings) = try Self.segment(image, mask: LazyDocumentMask())
        let evidence = try #require(findings["document_mask"], "\(findings)")
        #expect(evidence["edge_sides"]?.intValue == 0, "\(evidence)")
        #expect(evidence["chosen"]?.stringValue == "detector", "\(evidence)")
        if path.hasPrefix("ocrd/") {
            #expect(found.isFullFrame && found.corners == Quad(width: Double(image.width), height: Double(image.height)))
        } else {
            let truth = try Self.truth(String(path.dropLast(4)) + ".json")
            let iou = found.corners.iou(with: truth, inFrameWidth: Double(image.width), height: Double(image.height))
            #expect(iou >= 0.85 || found.confidence < RectifyStage.minimumConfidence,
                    "IoU \(iou) at confidence \(found.confidence): \(findings)")
        }
    }

    /// Decision 0101's photo: a page on a pale desk (held-out composite 79, Tests/Fixtures/README.md), where the
    /// mask misses the page's bold title and the detector alone keeps the frame. Two sides of the mask's outline lie
    /// on the photo's edges; the other two are the mask's guess, and one of them cuts the title off.
    @Test("a mask outline with only two sides on edges of the photo is not taken: a page whose title the mask misses stays whole")
    func outlineHalfGuessed() throws {
        let image = try Pix(contentsOfFile: Fixtures.path("cluttered/heldout-3939-079.jpg"))
        let truth = try Self.truth("cluttered/heldout-3939-079.json")
        let (found, findings) = try Self.segment(image, mask: LazyDocumentMask())
        let evidence = try #require(findings["document_mask"], "\(findings)")
        let sides = try #require(evidence["edge_sides"]?.intValue, "\(evidence)")
        #expect(sides > 0 && sides < DocumentMask.minimumEdgeSides, "\(evidence)")
        // The outline not taken leaves out more than a tenth of the page (its title).
        let outline = try #require(DocumentMaskOutlineTests.corners(evidence["outline"]), "\(evidence)")
        let width = Double(image.width), height = Double(image.height)
        let frame = Quad(width: width, height: height).corners
        let page = Polygon.clip(truth.corners, to: frame)
        let kept = Polygon.area(Polygon.clip(page, to: Polygon.clip(outline, to: frame))) / Polygon.area(page)
        #expect(kept < 0.9, "the mask's outline keeps \(kept) of the page: \(evidence)")
        #expect(evidence["chosen"]?.stringValue == "detector", "\(evidence)")
        #expect(found.isFullFrame && found.corners == Quad(width: width, height: height), "\(findings)")
    }

    @Test("the mask's share of a quadrilateral counts the cells whose centres lie inside it, in the squashed photo's grid")
    func share() {
        // A 512 grid over an 800 × 400 photo; the mask is the left half of the grid.
        let side = 512
        let on = (0..<(side * side)).map { $0 % side < side / 2 }
        let left = Quad([Point(0, 0), Point(400, 0), Point(400, 400), Point(0, 400)])
        let whole = Quad(width: 800, height: 400)
        let outside = Quad([Point(900, 0), Point(1000, 0), Point(1000, 10), Point(900, 10)])
        #expect(DocumentMask.share(of: left, filledBy: on, side: side, width: 800, height: 400) == 1)
        #expect(abs(DocumentMask.share(of: whole, filledBy: on, side: side, width: 800, height: 400) - 0.5) < 1e-9)
        #expect(DocumentMask.share(of: outside, filledBy: on, side: side, width: 800, height: 400) == 0)
    }

    @Test("IoU within the frame: only what the frame shows of each quadrilateral counts")
    func iouInFrame() {
        let inside = Quad([Point(0, 0), Point(100, 0), Point(100, 100), Point(0, 100)])
        let beyond = Quad([Point(0, 0), Point(200, 0), Point(200, 100), Point(0, 100)])
        #expect(abs(inside.iou(with: beyond) - 0.5) < 1e-9)
        #expect(abs(inside.iou(with: beyond, inFrameWidth: 100, height: 100) - 1) < 1e-9)
        let away = Quad([Point(300, 0), Point(400, 0), Point(400, 100), Point(300, 100)])
        #expect(inside.iou(with: away, inFrameWidth: 100, height: 100) == 0)
    }
}
