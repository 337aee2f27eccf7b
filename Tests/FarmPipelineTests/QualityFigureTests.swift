import Foundation
import Testing
import FarmAnalysis
import FarmCore
@testable import FarmPipeline
import Leptonica
import TestSupport

@Suite("The page quality figure (real Tesseract)")
struct QualityFigureTests {
    func read(_ bytes: [UInt8], skip: [CorrectionStage] = []) throws -> PageResult {
        let processor = PageProcessor(engine: .page)
        var options = PageOptions()
        options.engine = .tesseract
        options.skippedStages = skip
        return try processor.process(.image(bytes, index: 0), options: options).result
    }

    func png(_ pixels: GrayPixels) throws -> [UInt8] { try Pix(gray: pixels).encoded(as: .png) }

    @Test("a clean printed page scores high on every part, and its figure survives the store's structure JSON")
    func cleanPage() throws {
        let result = try read(Fixtures.read("tesseract-testdata/phototest.tif"))
        let quality = try #require(result.quality)
        #expect(quality.figure > 0.85, "\(quality)")
        #expect(quality.confidence > 0.85)
        #expect(try #require(quality.dictionary) > 0.8)
        #expect(try #require(quality.ink) > 0.8)
        #expect(quality.words == result.words.count && quality.words > 50)
        let worst = try #require(quality.worst)
        #expect(result.lines.contains { $0.box == worst.box })
        #expect(worst.confidence <= quality.confidence + 0.001)
        #expect(result.words.contains { $0.fromDictionary })
        let stored = try #require(PageResult(json: result.structureJSON))
        #expect(stored.quality == PageQuality(json: quality.json))
        #expect(stored.words.map(\.fromDictionary) == result.words.map(\.fromDictionary))
    }

    @Test("a blank page has figure 0 and no words")
    func blankPage() throws {
        let result = try read(png(GrayPixels(width: 1200, height: 900, value: 250)))
        let quality = try #require(result.quality)
        #expect(quality.figure == 0)
        #expect(quality.words == 0)
        // Not checked: its ink. The enhance stage turns a perfectly uniform page mostly black (97.7% of the pixels at
        // 0 for this one), so the page read has "ink"; the figure is 0 either way, as nothing was read.
        #expect(quality.worst == nil)
    }

    @Test("a page of speckle noise scores low")
    func noisyPage() throws {
        var pixels = GrayPixels(width: 1200, height: 900, value: 245)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in pixels.data.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // A tenth of the pixels dark, in blobs of one pixel: ink everywhere, no letters.
            if state >> 60 < 2 { pixels.data[index] = 20 }
        }
        let result = try read(png(pixels))
        let quality = try #require(result.quality)
        #expect(quality.figure < 0.5, "\(quality)")
    }

    @Test("the clean page upside down (orientation not corrected) reads as garble and scores far below it upright")
    func garbledPage() throws {
        let upright = try Pix(contentsOfFile: Fixtures.path("tesseract-testdata/phototest.tif"))
        let turned = try upright.rotatedOrthogonally(quarterTurns: 2).encoded(as: .png)
        let clean = try #require(try read(Fixtures.read("tesseract-testdata/phototest.tif")).quality)
        let garbled = try #require(try read(turned, skip: [.orient]).quality)
        #expect(garbled.figure < 0.6, "\(garbled)")
        #expect(garbled.figure < clean.figure - 0.3)
        if let dictionary = garbled.dictionary { #expect(dictionary < 0.5) }
    }

    @Test("the figure's formula and the ink share, on a made-up reading")
    func formula() throws {
        // Two ink blobs of equal size; only the left one is inside a word.
        var pixels = GrayPixels(width: 400, height: 100, value: 255)
        for y in 40..<60 { for x in 40..<80 { pixels[x, y] = 0 }; for x in 300..<340 { pixels[x, y] = 0 } }
        let words = ["alpha", "beta", "gamma"].enumerated().map { index, text in
            Word(text: text, box: Rect(x: 40 + index * 13, y: 40, width: 13, height: 20), confidence: 90,
                 fromDictionary: index < 2)
        }
        let line = Line(box: Rect(x: 40, y: 40, width: 40, height: 20), words: words)
        let result = PageResult(width: 400, height: 100, resolution: 300, text: "alpha beta gamma", meanConfidence: 90,
                                blocks: [Block(box: line.box, kind: "text", paragraphs: [Paragraph(box: line.box, lines: [line])])])
        let quality = QualityFigure.measure(result, gray: (400, 100, pixels.data), usesDictionary: true)
        let ink = try #require(quality.ink)
        #expect(abs(ink - 0.5) < 0.03, "\(ink)")
        #expect(abs(try #require(quality.dictionary) - 2.0 / 3) < 1e-9)
        let expected = (0.9 * 0.9 * (2.0 / 3) * ink).squareRoot().squareRoot()
        #expect(abs(quality.figure - expected) < 1e-9)
        // Without word lists the dictionary share is left out, and the weights renormalise.
        let unchecked = QualityFigure.measure(result, gray: (400, 100, pixels.data), usesDictionary: false)
        #expect(unchecked.dictionary == nil)
        // c^(2/3) · k^(1/3): the confidence's weight 2 and the ink's 1, over a total of 3.
        #expect(abs(unchecked.figure - Foundation.pow(0.9 * 0.9 * ink, 1.0 / 3)) < 1e-9)
        // Ink in a picture block is not held against the page.
        var pictured = result
        pictured.blocks.append(Block(box: Rect(x: 290, y: 30, width: 60, height: 40), kind: "image", paragraphs: []))
        let excused = QualityFigure.measure(pictured, gray: (400, 100, pixels.data), usesDictionary: true)
        #expect(try #require(excused.ink) > 0.95)
    }

}
