import Testing
import FarmCore
@testable import FarmPipeline
import TestSupport

/// A figure's labels (tick labels, axis titles) are left out of the neural reading's text, as Tesseract's layout
/// leaves an image region; prose, tables and a photo's background are not figures.
@Suite("Neural figure regions")
struct NeuralFigureTests {
    /// A white gray page with black rectangles.
    static func page(_ width: Int, _ height: Int, ink: [Rect]) -> NeuralImage {
        var plane = [UInt8](repeating: 255, count: width * height)
        for box in ink {
            for y in max(0, box.y)..<min(height, box.maxY) {
                for x in max(0, box.x)..<min(width, box.maxX) { plane[y * width + x] = 0 }
            }
        }
        return NeuralImage(width: width, height: height, planes: [plane])
    }

    /// A line of `words` at the box, with its print drawn as a dark bar inside it when `inked`.
    static func line(_ x: Int, _ y: Int, _ width: Int, words: [String], height: Int = 20) -> Line {
        let step = width / max(1, words.count)
        return Line(box: Rect(x: x, y: y, width: width, height: height), words: words.enumerated().map { i, text in
            Word(text: text, box: Rect(x: x + i * step, y: y, width: max(1, step - 2), height: height), confidence: 90)
        })
    }

    static let prose = ["one", "line", "of", "a", "column", "of", "prose"]

    /// A colour map: a panel of dense ink, 400×300 at 200, 300, with light stripes.
    static let colourMap: [Rect] = (0..<30).map { Rect(x: 200, y: 300 + $0 * 10, width: 400, height: 7) }
        + [Rect(x: 200, y: 300, width: 2, height: 300)]

    /// A line plot: a frame of 2-px lines with a curve inside, the same size: line art, not a picture.
    static let linePlot: [Rect] = [
        Rect(x: 200, y: 300, width: 400, height: 2), Rect(x: 200, y: 598, width: 400, height: 2),
        Rect(x: 200, y: 300, width: 2, height: 300), Rect(x: 598, y: 300, width: 2, height: 300),
    ] + (0..<40).map { Rect(x: 210 + $0 * 9, y: 580 - $0 * 6, width: 10, height: 8) }

    @Test("tick labels and an axis title around a colour map are a figure's labels; the caption and prose are not; a line plot's are text")
    func plotLabels() {
        let lines = [
            Self.line(100, 100, 800, words: Self.prose),                 // 0 prose above
            Self.line(170, 590, 25, words: ["0"]),                       // 1 y tick label
            Self.line(170, 300, 25, words: ["10"]),                      // 2 y tick label
            Self.line(190, 605, 30, words: ["-10"]), Self.line(580, 605, 30, words: ["10"]),  // 3, 4 x ticks
            Self.line(360, 625, 80, words: ["x", "[kpc]"]),              // 5 axis title
            Self.line(100, 680, 800, words: ["Fig.", "1.", "Maps", "of", "the", "gas", "surface"]),  // 6 caption
            Self.line(100, 900, 60, words: ["end."]),                   // 7 a short line far below
        ]
        let inkOfLines = lines.map { Rect(x: $0.box.x + 2, y: $0.box.y + 4, width: $0.box.width - 4, height: 12) }
        #expect(FigureRegions.labels(lines, on: Self.page(1000, 1000, ink: Self.colourMap + inkOfLines)) == [1, 2, 3, 4, 5])
        // Line art: Tesseract reads text in it, and a PDF's text layer holds a vector plot's labels.
        #expect(FigureRegions.labels(lines, on: Self.page(1000, 1000, ink: Self.linePlot + inkOfLines)).isEmpty)
        // The same lines without the plot's ink: nothing is a figure.
        #expect(FigureRegions.labels(lines, on: Self.page(1000, 1000, ink: inkOfLines)).isEmpty)
    }

    @Test("a ruled table's grid holds less ink than its cells' text: its cells are not figure labels")
    func ruledTable() {
        var lines: [Line] = [], ink: [Rect] = []
        for row in 0..<12 {
            ink.append(Rect(x: 100, y: 200 + row * 40, width: 600, height: 1))
            for column in 0..<3 {
                let cell = Self.line(110 + column * 200, 210 + row * 40, 150, words: ["12.5", "(3)"])
                lines.append(cell)
                ink.append(Rect(x: cell.box.x + 2, y: cell.box.y + 3, width: cell.box.width - 4, height: 14))
            }
        }
        for column in 0...3 { ink.append(Rect(x: 100 + column * 200, y: 200, width: 1, height: 480)) }
        #expect(FigureRegions.labels(lines, on: Self.page(1000, 1000, ink: ink)).isEmpty)
    }

    @Test("a photo's dark background reaches the image's edges: it is no figure")
    func background() {
        let lines = [Self.line(300, 300, 100, words: ["TOTAL"]), Self.line(300, 340, 100, words: ["6.36"])]
        let ink = [Rect(x: 0, y: 0, width: 1000, height: 200), Rect(x: 0, y: 0, width: 200, height: 1000)]
            + lines.map { Rect(x: $0.box.x + 2, y: $0.box.y + 4, width: $0.box.width - 4, height: 12) }
        #expect(FigureRegions.labels(lines, on: Self.page(1000, 1000, ink: ink)).isEmpty)
    }
}
