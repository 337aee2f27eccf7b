import Testing
import FarmCore

@Suite("Reading order")
struct ReadingOrderTests {
    func r(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Rect { Rect(x: x, y: y, width: w, height: h) }

    @Test("two columns under a title, with a footer: title, left column, right column, footer")
    func columns() {
        // The engine's order interleaves the columns (left 1, right 1, left 2, right 2).
        let boxes = [r(300, 100, 1800, 80),                      // 0 title across both columns
                     r(200, 300, 900, 400), r(1200, 300, 900, 400),   // 1 left, 2 right: breaks at the same height
                     r(200, 760, 920, 500), r(1180, 760, 900, 500),   // 3 left (ragged, long), 4 right
                     r(200, 1400, 1900, 60)]                       // 5 footer across
        #expect(ReadingOrder.order(boxes, lineHeight: 40) == [0, 1, 3, 2, 4, 5])
    }

    @Test("one column keeps the engine's order; a speck in the margin makes no column")
    func singleColumn() {
        let boxes = [r(200, 100, 1500, 300), r(200, 450, 1400, 200), r(20, 300, 8, 9), r(200, 700, 1600, 300)]
        #expect(ReadingOrder.order(boxes, lineHeight: 40) == [0, 1, 3, 2])
    }

    @Test("regions that overlap both ways keep the engine's order")
    func overlapping() {
        let boxes = [r(100, 100, 800, 400), r(500, 300, 800, 400), r(50, 200, 300, 300)]
        #expect(ReadingOrder.order(boxes, lineHeight: 40) == [0, 1, 2])
    }

    @Test("a page result's paragraphs are rearranged and the blocks follow")
    func pageResult() {
        // Paragraphs of prose: a line of a column holds more words than a table's cell (`RowLayout.cellWords`).
        func paragraph(_ box: Rect, _ text: String) -> Paragraph {
            let words = [text] + Array(repeating: "prose", count: RowLayout.cellWords)
            return Paragraph(box: box, lines: [Line(box: box, words: words.map { Word(text: $0, box: box, confidence: 90) })])
        }
        let left1 = paragraph(r(200, 300, 900, 400), "L1"), right1 = paragraph(r(1200, 300, 900, 400), "R1")
        let left2 = paragraph(r(200, 760, 900, 400), "L2"), right2 = paragraph(r(1200, 760, 900, 400), "R2")
        var page = PageResult(width: 2400, height: 1600, resolution: 300, text: "", meanConfidence: 90, blocks: [
            Block(box: r(200, 300, 1900, 400), kind: "text", paragraphs: [left1, right1]),
            Block(box: r(200, 760, 1900, 400), kind: "text", paragraphs: [left2, right2]),
        ])
        let moved = page.arrangeInReadingOrder()
        #expect(moved)
        #expect(page.lines.map { $0.words[0].text } == ["L1", "L2", "R1", "R2"])
        #expect(page.blocks.count == 4)
        let movedAgain = page.arrangeInReadingOrder()
        #expect(!movedAgain)
    }

    func shapes(_ boxes: [Rect], words: Int) -> [ReadingOrder.LineShape] {
        boxes.map { ReadingOrder.LineShape(box: $0, words: words) }
    }

    /// The (region, line) pairs of `parts`, flattened.
    func lines(_ parts: [ReadingOrder.Part]) -> [[Int]] {
        parts.flatMap { $0.map { [$0.region, $0.line] } }
    }

    @Test("item names beside their prices half a row lower are read row by row (SROIE 570's layout)")
    func alternatingRows() {
        // Left: a paragraph of two item names, then two single-line paragraphs; right: a paragraph of three prices,
        // each between two names, and a fourth price under the last name.
        let names = [r(50, 870, 120, 36), r(50, 950, 130, 36)], nescafe = r(50, 1040, 190, 36), away = r(50, 1120, 150, 36)
        let prices = [r(300, 910, 450, 36), r(300, 995, 450, 36), r(300, 1080, 450, 36)], last = r(300, 1165, 450, 36)
        let boxes = [r(50, 870, 130, 116), nescafe, away, r(300, 910, 450, 206), last]
        let lines = [shapes(names, words: 2), shapes([nescafe], words: 2), shapes([away], words: 2),
                     shapes(prices, words: 5), shapes([last], words: 5)]
        let parts = ReadingOrder.order(boxes, lines: lines, lineHeight: 36)
        #expect(self.lines(parts) == [[0, 0], [3, 0], [0, 1], [3, 1], [1, 0], [3, 2], [2, 0], [4, 0]])
        #expect(parts.count == 1)
        // Without lines the regions are read as columns, as before.
        #expect(ReadingOrder.order(boxes, lineHeight: 36) == [0, 1, 2, 3, 4])
    }

    @Test("labels beside their values at the same heights are read row by row")
    func alignedRows() {
        let labels = [r(50, 100, 200, 30), r(50, 140, 180, 30), r(50, 180, 120, 30)]
        let values = [r(600, 102, 100, 30), r(600, 141, 90, 30), r(600, 181, 100, 30)]
        let boxes = [r(50, 100, 200, 110), r(600, 102, 100, 109)]
        let parts = ReadingOrder.order(boxes, lines: [shapes(labels, words: 2), shapes(values, words: 1)], lineHeight: 30)
        #expect(lines(parts) == [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2]])
    }

    @Test("prose columns whose lines are at the same heights stay columns; so do two headings side by side")
    func proseColumnsStay() {
        let left = (0..<5).map { r(200, 300 + 40 * $0, 900, 30) }, right = (0..<5).map { r(1200, 300 + 40 * $0, 900, 30) }
        let boxes = [r(200, 300, 900, 190), r(1200, 300, 900, 190)]
        let parts = ReadingOrder.order(boxes, lines: [shapes(left, words: 9), shapes(right, words: 9)], lineHeight: 30)
        #expect(lines(parts) == (0..<5).map { [0, $0] } + (0..<5).map { [1, $0] })
        // One short line beside one short line (two columns' headings) is no evidence of rows.
        let headings = [r(200, 300, 400, 120), r(1200, 300, 400, 120)]
        let headingLines = [shapes([r(200, 300, 400, 120)], words: 2), shapes([r(1200, 300, 400, 120)], words: 2)]
        #expect(lines(ReadingOrder.order(headings, lines: headingLines, lineHeight: 30)) == [[0, 0], [1, 0]])
        // Lines that take turns but hold prose on both sides are columns too.
        let proseLeft = [r(200, 300, 900, 30), r(200, 380, 900, 30)], proseRight = [r(1200, 340, 900, 30), r(1200, 420, 900, 30)]
        let turns = ReadingOrder.order([r(200, 300, 900, 110), r(1200, 340, 900, 110)],
                                       lines: [shapes(proseLeft, words: 8), shapes(proseRight, words: 8)], lineHeight: 30)
        #expect(lines(turns) == [[0, 0], [0, 1], [1, 0], [1, 1]])
    }

    @Test("a page result's columns that make rows become one paragraph of rows")
    func pageResultRows() {
        func line(_ box: Rect, _ text: String) -> Line {
            Line(box: box, words: text.split(separator: " ").map { Word(text: String($0), box: box, confidence: 90) })
        }
        let items = Paragraph(box: r(50, 100, 200, 110), lines: [line(r(50, 100, 200, 30), "Teh (B)"),
                                                                 line(r(50, 180, 200, 30), "Cham (B)")])
        let prices = Paragraph(box: r(600, 140, 300, 110), lines: [line(r(600, 140, 300, 30), "1 x 2.10"),
                                                                   line(r(600, 220, 300, 30), "2 x 4.20")])
        var page = PageResult(width: 1000, height: 400, resolution: 300, text: "", meanConfidence: 90, blocks: [
            Block(box: items.box, kind: "text", paragraphs: [items]),
            Block(box: prices.box, kind: "text", paragraphs: [prices]),
        ])
        let moved = page.arrangeInReadingOrder()
        #expect(moved)
        #expect(page.lines.map { $0.words.map(\.text).joined(separator: " ") } == ["Teh (B)", "1 x 2.10", "Cham (B)", "2 x 4.20"])
        #expect(page.blocks.count == 1)
        #expect(page.blocks[0].box == r(50, 100, 850, 150))
        let movedAgain = page.arrangeInReadingOrder()
        #expect(!movedAgain)
    }
}
