import Testing
import FarmCore
@testable import FarmPipeline
import TestSupport

@Suite("Marks read for letters: a lone 0 at the x-height is o, ¢ inside a word is ç (real Tesseract)")
struct LetterLookAlikesTests {
    func word(_ text: String, height: Int, at x: Int) -> Word {
        Word(text: text, box: Rect(x: x, y: 100 - height, width: 12 * text.count, height: height), confidence: 90)
    }

    func page(_ words: [Word]) -> PageResult {
        let box = Rect(x: 0, y: 70, width: 600, height: 30)
        var result = PageResult(width: 600, height: 200, resolution: 0, text: "", meanConfidence: 90,
                                blocks: [Block(box: box, kind: "text",
                                               paragraphs: [Paragraph(box: box, lines: [Line(box: box, words: words)])])])
        result.text = TesseractRecognizer.text(of: result)
        return result
    }

    @Test("a 0 no taller than lower-case letters between words of letters becomes o; a digit's height, a number beside it, or no line to measure leave it")
    func decided() {
        // eurotext's line as the scaled page gives it: "sobre" 23 pixels high (b rises), the 0 at 17.
        let portuguese = page([word("salta", height: 23, at: 0), word("sobre", height: 23, at: 70),
                               word("0", height: 17, at: 140), word("cão", height: 22, at: 160)])
        let fixed = LetterLookAlikes.corrected(portuguese)
        #expect(fixed.changed == 1)
        #expect(TesseractRecognizer.text(of: fixed.result).hasPrefix("salta sobre o cão"))
        // Lining figures stand as tall as capitals and ascenders: "from 0 to 0.9" keeps its digit.
        let zero = page([word("from", height: 25, at: 0), word("0", height: 25, at: 60), word("to", height: 24, at: 80)])
        #expect(LetterLookAlikes.corrected(zero).changed == 0)
        // Beside a number or a sign it is a digit whatever its height (old-style figures, subscripts).
        let numbers = page([word("then", height: 23, at: 0), word("0", height: 15, at: 60), word("4", height: 15, at: 80)])
        #expect(LetterLookAlikes.corrected(numbers).changed == 0)
        let formula = page([word("then", height: 23, at: 0), word("=", height: 8, at: 60), word("0", height: 15, at: 80)])
        #expect(LetterLookAlikes.corrected(formula).changed == 0)
        // No word rises to the ascender without hanging below the baseline: nothing to measure, left as read.
        let unmeasured = page([word("more", height: 15, at: 0), word("0", height: 15, at: 60), word("very", height: 22, at: 80)])
        #expect(LetterLookAlikes.corrected(unmeasured).changed == 0)
    }

    @Test("¢ between two letters is ç; after a digit or at a word's edge it stays")
    func cedillas() {
        #expect(LetterLookAlikes.withCedillas("pregui¢oso.") == "preguiçoso.")
        #expect(LetterLookAlikes.withCedillas("fa¢ade") == "façade")
        #expect(LetterLookAlikes.withCedillas("50¢") == nil)
        #expect(LetterLookAlikes.withCedillas("¢a") == nil)
        #expect(LetterLookAlikes.withCedillas("preguiçoso") == nil)
    }

    @Test("eurotext read with eng at fast: 'sobre o cão preguiçoso', not 'sobre 0' nor 'pregui¢oso'")
    func eurotext() throws {
        let result = try PageProcessor(engine: .page)
            .process(.image(Fixtures.read("tesseract-testdata/eurotext.tif"), index: 0), options: PageOptions()).result
        #expect(result.text.contains("sobre o c"), "\(result.text)")
        #expect(!result.text.contains("sobre 0"), "\(result.text)")
        #expect(!result.text.contains("¢"), "\(result.text)")
    }
}
