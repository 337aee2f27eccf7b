import Foundation
import Testing
import FarmCore
@testable import FarmPipeline
import Leptonica
import TestSupport

/// The correction stages do no harm on real pages: light text on dark ground, a ruled table's numbers and a page's
/// small text are read after correction (each of these was lost on the pipeline before).
@Suite("Stages that do no harm")
struct HarmTests {
    /// Order-free words as `score.py` takes them (`\w+` runs), counted.
    static func words(_ text: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        let regex = try! NSRegularExpression(pattern: "\\w+")
        let range = NSRange(text.startIndex..., in: text)
        for match in regex.matches(in: text, range: range) {
            counts[String(text[Range(match.range, in: text)!]), default: 0] += 1
        }
        return counts
    }

    /// Order-free word F1 of `hypothesis` against `reference`, and the recall of the reference's numbers.
    static func scores(reference: String, hypothesis: String) -> (f1: Double, numberRecall: Double) {
        let truth = words(reference), read = words(hypothesis)
        let common = truth.reduce(0) { $0 + min($1.value, read[$1.key] ?? 0) }
        let f1 = 2 * Double(common) / Double(max(1, truth.values.reduce(0, +) + read.values.reduce(0, +)))
        let numbers = truth.filter { $0.key.allSatisfy(\.isNumber) }
        let found = numbers.reduce(0) { $0 + min($1.value, read[$1.key] ?? 0) }
        return (f1, Double(found) / Double(max(1, numbers.values.reduce(0, +))))
    }

    /// `image` through the default correction stages and recognized: the text and the stages' findings.
    static func read(_ image: Pix) throws -> (text: String, findings: JSON) {
        let (corrected, context) = try PagePipeline(options: PipelineOptions())
            .run(DecodedPage(image: image, format: .png, declaredResolution: 0))
        let page = DecodedPage(image: corrected, format: .png, declaredResolution: context.resolution)
        let text = try TesseractRecognizer().recognize(page, options: RecognitionOptions()).text
        return (text, context.findingsJSON)
    }

    static func truth(_ name: String) throws -> String {
        String(decoding: try Fixtures.read("harm/\(name).gt.txt"), as: UTF8.self)
    }

    @Test("light text on a dark gray band across a real page is read (enhance took the band for paper and whitened it)")
    func lightOnDark() throws {
        var pixels = try Pix(contentsOfFile: Fixtures.phototest).grayscale().grayPixels()
        // The band runs from one blank gap between lines to another, over the middle third of the page: dark gray
        // ground (90) under light letters (250), as on a slide or a table's header.
        let blank = (0..<pixels.height).map { y in (0..<pixels.width).allSatisfy { pixels[$0, y] > 128 } }
        let top = (pixels.height / 3..<pixels.height).first { blank[$0] }!
        let bottom = (top + 60..<pixels.height).first { blank[$0] && $0 >= 2 * pixels.height / 3 }!
        for y in top...bottom {
            for x in 0..<pixels.width { pixels[x, y] = UInt8(90 + (255 - Int(pixels[x, y])) * 160 / 255) }
        }
        let banded = try Pix(gray: pixels)
        let (text, findings) = try Self.read(banded)
        let cer = TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: text)
        #expect(cer < 0.05, "CER \(cer): \(text)")
        #expect(findings["enhance"]?["inverted_regions"]?.intValue == 1, "\(findings.rendered)")
        // The picture kept for the PDF shows the band as it is printed: dark.
        var context = PageContext(originalWidth: banded.width, originalHeight: banded.height, resolution: 0)
        _ = try EnhanceStage(mode: .gray).run(banded, &context)
        let kept = try #require(context.keptImage).grayPixels()
        let middle = (top + bottom) / 2
        let row = (0..<kept.width).map { Int(kept[$0, middle]) }
        #expect(row.reduce(0, +) / row.count < 128)
    }

    @Test("an ordinary page has nothing inverted")
    func nothingInverted() throws {
        let (text, findings) = try Self.read(try Pix(contentsOfFile: Fixtures.phototest))
        #expect(findings["enhance"]?["inverted_regions"]?.intValue == 0, "\(findings.rendered)")
        #expect(TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: text) < 0.03)
    }

    @Test("a ruled table's numbers are read (the page reading dropped every number of this real table)")
    func tableNumbers() throws {
        let name = "PMC4776821_005_00"
        let (text, _) = try Self.read(try Pix(contentsOfFile: Fixtures.path("harm/\(name).png")))
        let (f1, numbers) = Self.scores(reference: try Self.truth(name), hypothesis: text)
        #expect(numbers >= 0.6, "numbers found \(numbers): \(text)")
        #expect(f1 >= 0.75, "F1 \(f1): \(text)")
    }

    @Test("a table framed by rules is found, and rules are painted out")
    func rulings() throws {
        let image = try Pix(contentsOfFile: Fixtures.path("harm/PMC3826085_003_00.png")).grayscale().resampled(by: 3)
        let found = try TableRulings.removed(from: image)
        #expect(found.pixels > 0)
        let table = try #require(found.tables.first)
        // The table spans the crop: its rules from the top to the bottom of the body.
        #expect(Double(table.width) > 0.9 * Double(image.width) && Double(table.height) > 0.8 * Double(image.height), "\(table)")
        // An unruled page has neither.
        let plain = try TableRulings.removed(from: try Pix(contentsOfFile: Fixtures.phototest).grayscale())
        #expect(plain.pixels == 0 && plain.tables.isEmpty)
    }

    @Test("scale never reduces a page so far that its small text becomes unreadable")
    func smallTextKept() throws {
        // A real page enlarged (body x-height about 29 px, which scale would halve) over a real table whose cell
        // text has an x-height of about 12 px: halving the page for its body text left the table unreadable.
        let body = try Pix(contentsOfFile: Fixtures.phototest).grayscale().resampled(by: 1.6).grayPixels()
        let name = "PMC3826085_003_00"
        let table = try Pix(contentsOfFile: Fixtures.path("harm/\(name).png")).grayscale().resampled(by: 2.5).grayPixels()
        var page = GrayPixels(width: body.width, height: body.height + table.height + 40, value: 255)
        for y in 0..<body.height { for x in 0..<body.width { page[x, y] = body[x, y] } }
        for y in 0..<table.height { for x in 0..<table.width { page[x + 40, body.height + 20 + y] = table[x, y] } }
        let image = try Pix(gray: page)
        let estimate = try #require(try TextSize.estimate(image))
        #expect(estimate.xHeight > 20 && estimate.smallXHeight < 14, "\(estimate)")
        let factor = ScaleStage.factor(for: estimate, target: ScaleStage.targetXHeight)
        #expect(factor >= min(1, ScaleStage.minimumXHeight / estimate.smallXHeight), "factor \(factor)")
        let (text, _) = try Self.read(image)
        let (_, numbers) = Self.scores(reference: try Self.truth(name), hypothesis: text)
        #expect(numbers >= 0.5, "table numbers found \(numbers): \(text)")
    }

    @Test("scale: body text alone sets the factor; small text only holds a reduction back")
    func scaleFactor() {
        let target = ScaleStage.targetXHeight
        // Small body text is enlarged to the target, at most 2.5 times.
        #expect(abs(ScaleStage.factor(for: .init(xHeight: 8, support: 100), target: target) - 2) < 1e-9)
        #expect(abs(ScaleStage.factor(for: .init(xHeight: 5, support: 100), target: target) - 2.5) < 1e-9)
        // Small print on a page of small body text does not enlarge it further.
        #expect(abs(ScaleStage.factor(for: .init(xHeight: 8, support: 100, smallXHeight: 4), target: target) - 2) < 1e-9)
        // Large body text is reduced, but only as far as its small text stays at a readable size.
        #expect(abs(ScaleStage.factor(for: .init(xHeight: 32, support: 100), target: target) - 0.5) < 1e-9)
        #expect(abs(ScaleStage.factor(for: .init(xHeight: 32, support: 100, smallXHeight: 16), target: target) - 0.75) < 1e-9)
        #expect(abs(ScaleStage.factor(for: .init(xHeight: 36, support: 100, smallXHeight: 12), target: target) - 1) < 1e-9)
    }

    @Test("deskew does no harm to a bilevel scan: a 1-bit page is turned as gray, not sheared into stair steps")
    func bilevelScanTurned() throws {
        let name = "tesseract-testdata/8071_093.3B"
        let bytes = try Fixtures.read("\(name).tif")
        #expect(try Pix(encoded: bytes).depth == 1)
        let truth = String(decoding: try Fixtures.read("\(name).gt.txt"), as: UTF8.self)
        func read(skipping stages: [CorrectionStage]) throws -> PageResult {
            var options = PageOptions()
            options.skippedStages = stages
            return try PageProcessor(engine: .page).process(.image(bytes, index: 0), options: options).result
        }
        let corrected = try read(skipping: [])
        #expect(corrected.findings["deskew"]?["applied"]?.boolValue == true, "\(corrected.findings)")
        let raw = try read(skipping: CorrectionStage.allCases)
        let (f1, _) = Self.scores(reference: truth, hypothesis: corrected.text)
        let (rawF1, _) = Self.scores(reference: truth, hypothesis: raw.text)
        // Measured: turned 0.42° by shearing the 1-bit page, F1 0.987 ("Manor" read "Manot", "from" "fom", "tell"
        // "fell"); turned as gray 0.9925; raw tesseract 0.9917.
        #expect(f1 >= rawF1, "F1 \(f1) against raw \(rawF1): \(corrected.text)")
    }
}
