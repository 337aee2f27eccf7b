import Testing
import FarmCore
@testable import FarmPipeline

/// Lines from the detector into rows and blocks, on made-up line boxes.
@Suite("Neural line layout")
struct NeuralLayoutTests {
    /// A line of `words` (single letters "w") at the box, words spread along it.
    static func line(_ x: Int, _ y: Int, _ width: Int, _ height: Int = 20, words: [String]) -> Line {
        let step = width / max(1, words.count)
        return Line(box: Rect(x: x, y: y, width: width, height: height), words: words.enumerated().map { i, text in
            Word(text: text, box: Rect(x: x + i * step, y: y, width: max(1, step - 2), height: height), confidence: 90)
        })
    }

    static func prose(_ x: Int, _ y: Int, _ width: Int) -> Line {
        line(x, y, width, words: ["one", "line", "of", "a", "column", "of", "prose"])
    }

    @Test("a receipt's label and its value far across the row become one line; so do a table's cells")
    func receiptRows() {
        let lines = [
            Self.line(100, 10, 300, words: ["SHOP", "NAME", "SDN", "BHD"]),  // crosses the gaps below
            Self.line(20, 60, 80, words: ["Date:"]), Self.line(300, 61, 150, words: ["25/12/2018", "8:13:39", "PM"]),
            Self.line(20, 90, 80, words: ["Cashier:"]), Self.line(300, 90, 60, words: ["MANIS"]),
            Self.line(20, 120, 200, words: ["TOTAL", "SALES", "(INCL", "GST)", ":"]), Self.line(400, 121, 50, words: ["6.36"]),
        ]
        let joined = LineLayout.joinedRows(lines)
        #expect(joined.map(\.text) == ["SHOP NAME SDN BHD", "Date: 25/12/2018 8:13:39 PM", "Cashier: MANIS", "TOTAL SALES (INCL GST) : 6.36"])
        #expect(joined[1].box == Rect(x: 20, y: 60, width: 430, height: 21))
    }

    @Test("a row's pieces whose grown boxes overlap by half a line height stay in order (SROIE 390's item row)")
    func overlappingPieces() {
        // The detector's boxes of SROIE receipt 390: "2X" ends at x 594, the unit price "5.30" starts at 570.
        let lines = [
            Self.line(86, 818, 250, 48, words: ["MC22-32", "-", "10/120"]),
            Self.line(77, 869, 140, 48, words: ["9068477"]), Self.line(484, 871, 110, 47, words: ["2X"]),
            Self.line(570, 870, 100, 49, words: ["5.30"]), Self.line(686, 870, 113, 49, words: ["10.60"]),
            Self.line(73, 920, 200, 46, words: ["HOOK1526#"]),
        ]
        #expect(LineLayout.joinedRows(lines).map(\.text) == ["MC22-32 - 10/120", "9068477 2X 5.30 10.60", "HOOK1526#"])
    }

    @Test("two columns of prose stay apart, even beside a short last line of a paragraph")
    func proseColumnsStayApart() {
        var lines: [Line] = []
        for row in 0..<6 {
            lines.append(Self.prose(50, 100 + 30 * row, 400))
            lines.append(row == 5 ? Self.line(520, 100 + 30 * row, 80, words: ["the", "end."]) : Self.prose(520, 100 + 30 * row, 400))
        }
        lines.append(Self.line(50, 20, 870, words: ["A", "title", "across", "both", "columns"]))
        let joined = LineLayout.joinedRows(lines)
        #expect(joined.count == lines.count)
        // Stacked lines make a block per column and one for the title.
        let blocks = LineLayout.blocks(joined)
        #expect(blocks.map { $0.paragraphs[0].lines.count } == [1, 6, 6])
        #expect(blocks[1].box.x == 50 && blocks[2].box.x == 520)
        // ocrfarm's reading order then reads the left column before the right one.
        var result = PageResult(width: 1000, height: 400, resolution: 300, text: "", meanConfidence: 90, blocks: blocks)
        result.arrangeInReadingOrder()
        #expect(result.lines.map(\.box.x) == [50] + Array(repeating: 50, count: 6) + Array(repeating: 520, count: 6))
    }

    @Test("a wide gap within a row joins when it is only a wide space (under one line height)")
    func wideSpace() {
        let lines = [Self.prose(20, 20, 400), Self.prose(435, 22, 400), Self.prose(20, 200, 400), Self.prose(445, 200, 400)]
        // Gaps of 15 pixels (joined) and 25 (more than the 20-pixel line height: two columns' lines, apart).
        #expect(LineLayout.joinedRows(lines).map(\.box.width) == [815, 400, 400])
    }

    @Test("blocks break at a wide vertical gap and at a change of text size")
    func blockBreaks() {
        let lines = [Self.line(20, 20, 300, 40, words: ["A", "heading"]), Self.line(20, 70, 300, words: ["body", "one"]),
                     Self.line(20, 95, 300, words: ["body", "two"]), Self.line(20, 200, 300, words: ["after", "a", "gap"])]
        #expect(LineLayout.blocks(lines).map { $0.paragraphs[0].lines.map(\.text) } == [["A heading"], ["body one", "body two"], ["after a gap"]])
    }
}

@Suite("Neural word boxes on the line's ink")
struct NeuralInkRowsTests {
    /// A white crop `width` × `height` with dark rows `ink` (each a range of rows).
    static func crop(width: Int = 200, height: Int, ink: [Range<Int>], gray: UInt8 = 30) -> LineCrop {
        var pixels = [UInt8](repeating: 235, count: width * height)
        for rows in ink {
            for y in rows { for x in 10..<(width - 10) where x % 7 != 0 { pixels[y * width + x] = gray } }
        }
        let image = NeuralImage(width: width, height: height, planes: [pixels])
        let region = TextRegion(corners: [Point(0, 0), Point(Double(width), 0), Point(Double(width), Double(height)),
                                          Point(0, Double(height))], score: 0.9)
        return LineCrop(region, of: image)!
    }

    @Test("the rows of the line in the middle, without the edges of its neighbours above and below")
    func middleLine() throws {
        // A grown region 60 rows high: its line in rows 22-37, the foot of the line above in rows 0-3, the head of
        // the line below in rows 55-59.
        let crop = Self.crop(height: 60, ink: [0..<4, 22..<38, 55..<60])
        #expect(crop.inkRows == 21..<39)
        let box = try #require(crop.pageBox(from: 0, to: 200, rows: crop.inkRows, within: Rect(x: 0, y: 0, width: 200, height: 60)))
        #expect(box == Rect(x: 0, y: 21, width: 200, height: 18))
    }

    @Test("a flat or blank crop keeps its full height")
    func flat() {
        #expect(Self.crop(height: 40, ink: []).inkRows == nil)
        #expect(Self.crop(height: 40, ink: [0..<40], gray: 225).inkRows == nil)
        // Ink only at the edges, none near the middle: the region's rows stand.
        #expect(Self.crop(height: 60, ink: [0..<5, 56..<60]).inkRows == nil)
    }
}
