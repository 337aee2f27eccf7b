import Foundation
import Testing
import FarmCore
@testable import FarmPipeline
import Leptonica
import TestSupport

/// Real paper pages (docbank-sample): the scraps the engine reads at under 30 confidence in a page's formulas are
/// noise, and leaving them out raises the page's order-free word F1.
@Suite("Paper pages (real Tesseract)")
struct PaperPageTests {
    static let page = "docbank/delayed-acceptance-11.jpg"

    /// Order-free word F1 as `shared/bench/score.py --nfkc` counts it: NFKC, then `\w+` runs compared as multisets.
    static func wordF1(reference: String, hypothesis: String) -> Double {
        func words(_ text: String) -> [String: Int] {
            let text = text.precomposedStringWithCompatibilityMapping
            var counts: [String: Int] = [:]
            let regex = try! NSRegularExpression(pattern: "\\w+")
            for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                counts[String(text[Range(match.range, in: text)!]), default: 0] += 1
            }
            return counts
        }
        let truth = words(reference), read = words(hypothesis)
        let common = truth.reduce(0) { $0 + min($1.value, read[$1.key] ?? 0) }
        let total = truth.values.reduce(0, +) + read.values.reduce(0, +)
        return total > 0 ? 2 * Double(common) / Double(total) : 0
    }

    static func truth() throws -> String {
        try String(contentsOfFile: Fixtures.path("docbank/delayed-acceptance-11.gt.txt"), encoding: .utf8)
    }

    @Test("the engine's doubtful words on a real paper page are mostly noise: without them the page's F1 rises")
    func noiseLeftOut() throws {
        // The page as the engine reads it, before anything of ocrfarm's is applied to the reading.
        let image = try Pix(encoded: Fixtures.read(Self.page))
        let recognizer = try TesseractRecognizer()
        let recognition = try recognizer.read(image, with: recognizer.engine, resolution: 0, options: RecognitionOptions(),
                                              since: Clock.monotonicNanoseconds)
        let whole = PageResult(recognition, resolution: 0)
        let cleaned = NoiseWords.removed(from: whole)
        #expect(cleaned.removed > 0)
        #expect(cleaned.result.words.allSatisfy {
            $0.confidence >= NoiseWords.confidenceFloor || NoiseWords.holdsLetterRun($0.text) || NoiseWords.isNumber($0.text)
        })
        let truth = try Self.truth()
        let before = Self.wordF1(reference: truth, hypothesis: TesseractRecognizer.text(of: whole))
        let after = Self.wordF1(reference: truth, hypothesis: TesseractRecognizer.text(of: cleaned.result))
        // Measured 0.700 and 0.723 through the whole pipeline (release, score.py --nfkc).
        #expect(after >= before + 0.01, "word F1 \(before) with the scraps, \(after) without")
    }

    @Test("a real paper page read by the pipeline scores above main's reading of it (0.700)")
    func pageReading() throws {
        let processor = PageProcessor(engine: .page)
        let result = try processor.process(.image(Fixtures.read(Self.page), index: 0), options: PageOptions()).result
        let f1 = Self.wordF1(reference: try Self.truth(), hypothesis: result.text)
        #expect(f1 >= 0.712, "word F1 \(f1)")
        #expect(result.words.allSatisfy {
            $0.confidence >= NoiseWords.confidenceFloor || NoiseWords.holdsLetterRun($0.text) || NoiseWords.isNumber($0.text)
        })
    }

    @Test("misread words, numbers and custom words are never noise, and a page whose reading is mostly doubtful keeps it whole")
    func weakPageKept() {
        func word(_ text: String, _ confidence: Double, x: Int) -> Word {
            Word(text: text, box: Rect(x: x, y: 0, width: 10, height: 10), confidence: confidence)
        }
        func page(_ words: [Word]) -> PageResult {
            let line = Line(box: Rect(x: 0, y: 0, width: 100, height: 10), words: words)
            let paragraph = Paragraph(box: line.box, lines: [line])
            return PageResult(width: 100, height: 10, resolution: 0, text: "", meanConfidence: 0,
                              blocks: [Block(box: line.box, kind: "text", paragraphs: [paragraph])])
        }
        let weak = page([word("~:", 20, x: 0), word("Rl", 25, x: 20), word("TOTAL", 80, x: 40)])
        #expect(NoiseWords.removed(from: weak).removed == 0)
        // A misread word keeps its letters and is kept; a scrap of symbols goes, unless it is a custom word.
        let mixed = page([word("Staghetinatien", 12, x: 0), word("S{Xy", 10, x: 10), word("Magnetization", 91, x: 20),
                          word("field", 88, x: 40), word("A7-X", 15, x: 60), word("of", 95, x: 80),
                          word("(0.25).", 8, x: 90)])
        let cleaned = NoiseWords.removed(from: mixed, keeping: ["A7-X"])
        #expect(cleaned.removed == 1)
        #expect(cleaned.result.words.map(\.text) == ["Staghetinatien", "Magnetization", "field", "A7-X", "of", "(0.25)."])
        let empty = page([word("Xj", 5, x: 0), word("ok", 90, x: 20), word("ok", 90, x: 40)])
        #expect(NoiseWords.removed(from: empty).result.words.map(\.text) == ["ok", "ok"])
    }
}
