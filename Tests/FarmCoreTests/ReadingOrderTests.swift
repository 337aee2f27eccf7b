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
        func paragraph(_ box: Rect, _ text: String) -> Paragraph {
            Paragraph(box: box, lines: [Line(box: box, words: [Word(text: text, box: box, confidence: 90)])])
        }
        let left1 = paragraph(r(200, 300, 900, 400), "L1"), right1 = paragraph(r(1200, 300, 900, 400), "R1")
        let left2 = paragraph(r(200, 760, 900, 400), "L2"), right2 = paragraph(r(1200, 760, 900, 400), "R2")
        var page = PageResult(width: 2400, height: 1600, resolution: 300, text: "", meanConfidence: 90, blocks: [
            Block(box: r(200, 300, 1900, 400), kind: "text", paragraphs: [left1, right1]),
            Block(box: r(200, 760, 1900, 400), kind: "text", paragraphs: [left2, right2]),
        ])
        let moved = page.arrangeInReadingOrder()
        #expect(moved)
        #expect(page.words.map(\.text) == ["L1", "L2", "R1", "R2"])
        #expect(page.blocks.count == 4)
        let movedAgain = page.arrangeInReadingOrder()
        #expect(!movedAgain)
    }
}
