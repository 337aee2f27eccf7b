import Testing
import FarmCore
@testable import FarmPipeline
import TestSupport

@Suite("Receipts: rules read as letters left out, rows read from blank regions and row by row (real Tesseract)")
struct ReceiptShapeTests {
    func read(_ fixture: String) throws -> PageResult {
        try PageProcessor(engine: .tesseract).process(.image(Fixtures.read(fixture), index: 0), options: PageOptions()).result
    }

    func truth(_ fixture: String) throws -> String {
        try String(contentsOfFile: Fixtures.path(fixture), encoding: .utf8).lowercased()
    }

    @Test("a doubtful word is out of shape when flatter than a quarter of the text height or wider than three heights a character")
    func shapes() {
        func word(_ text: String, _ width: Int, _ height: Int, _ confidence: Double) -> Word {
            Word(text: text, box: Rect(x: 0, y: 0, width: width, height: height), confidence: confidence)
        }
        // A dashed rule 323 × 10 read as "EEE" on a page of 18-pixel text, and a 2 × 2 speck read as "FY".
        #expect(WordShape.isOutOfShape(word("EEE", 323, 10, 42), textHeight: 18))
        #expect(WordShape.isOutOfShape(word("FY", 2, 2, 69), textHeight: 18))
        // Lower-case text at the x-height, a wide "W", a dash and a confident word are text.
        #expect(!WordShape.isOutOfShape(word("one", 30, 9, 40), textHeight: 18))
        #expect(!WordShape.isOutOfShape(word("W", 20, 17, 40), textHeight: 18))
        #expect(!WordShape.isOutOfShape(word("—", 60, 2, 10), textHeight: 18))
        #expect(!WordShape.isOutOfShape(word("TOTAL", 400, 10, 90), textHeight: 18))
        #expect(WordShape.medianTextHeight(of: [word("a", 9, 10, 90), word("-", 9, 2, 90), word("b", 9, 20, 90),
                                                 word("c", 9, 18, 90)]) == 18)
    }

    @Test("a real receipt's dashed rules are not read as words ('EEE', 'eee', 'ween new')")
    func rulesLeftOut() throws {
        let result = try read("reread/sroie-180-rules.jpg")
        let words = Set(result.words.map(\.text))
        #expect(words.isDisjoint(with: ["EEE", "eee", "ween", "lll"]), "\(result.text)")
        let cer = TextMetrics.characterErrorRate(reference: try truth("reread/sroie-180-rules.gt.txt"),
                                                 hypothesis: result.text.lowercased())
        // Measured (release, score.py --fold-case): 17.8% with the rules read as words, 12.9% without.
        #expect(cer < 0.155, "case-folded CER \(cer)")
    }

    @Test("a real receipt's large-print rows the layout analysis returned as a blank line are read as a block")
    func blankRowsRead() throws {
        let result = try read("reread/sroie-150-blank.jpg")
        #expect(result.text.lowercased().contains("change 20.00"), "\(result.text)")
        let finding = try #require(result.findings["blank_regions"])
        #expect((finding["filled"]?.intValue ?? 0) >= 1, "\(finding)")
        for word in result.words {
            #expect(word.box.x >= 0 && word.box.y >= 0 && word.box.maxX <= result.width && word.box.maxY <= result.height)
        }
    }

    @Test("a real receipt's item names and their prices, half a row lower in a column of their own, are read row by row")
    func rowsReadInTurn() throws {
        let result = try read("reread/sroie-570-rows.jpg")
        let text = result.text.lowercased()
        /// Where `word` first comes in the text (the end when it does not).
        func place(_ word: String) -> String.Index { text.range(of: word)?.lowerBound ?? text.endIndex }
        // Each item, then its price row: "Teh (B)", "1 x 2.10 2.10 ZRL", "Cham (B)", "2 x 2.10 4.20 ZRL", ...
        let order = ["teh", "2.10", "cham", "4.20", "nescafe", "2.50", "take away", "0.80"].map(place)
        #expect(order == order.sorted() && !order.contains(text.endIndex), "\(result.text)")
        let cer = TextMetrics.characterErrorRate(reference: try truth("reread/sroie-570-rows.gt.txt"), hypothesis: text)
        // Measured (release, score.py --fold-case): 14.2% with the names and prices read as two columns, 3.7% by rows.
        #expect(cer < 0.08, "case-folded CER \(cer)")
    }
}
