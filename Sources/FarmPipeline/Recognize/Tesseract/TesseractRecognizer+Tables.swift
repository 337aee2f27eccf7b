import FarmCore
import Leptonica
import Tesseract
#if canImport(Glibc)
import Glibc
#endif

/// Tables read as tables: the page is read without its ruling lines, and each ruled table is read again as one
/// block of rows (Tesseract's single-block segmentation), which keeps the cells' numbers that the page layout
/// analysis drops (it splits a table into column fragments, or takes it for a picture). The table's block reading
/// replaces the page reading's words inside it when it holds more confidently read characters.
extension TesseractRecognizer {
    /// Characters of words read at least this confidently are the measure of a reading.
    static let confidentWord = 60.0
    /// A table's block reading must hold this much more confident text than the page reading to replace it.
    static let tableMargin = 1.1

    /// `image` without its ruling lines, and the tables they frame (empty when there are none).
    static func tablePrepared(_ image: Pix) throws(PageFailure) -> (image: Pix, tables: [Leptonica.Box]) {
        do throws(LeptonicaError) {
            let found = try TableRulings.removed(from: image)
            guard found.tables.isEmpty else { return (found.image, found.tables) }
            // No rules frame a table, but the page may be one laid out by white space alone (a table cut out of a
            // paper, a price list): then the whole page is read as a table too, and kept where it reads surer.
            let rows = TableCells.cells(try image.grayPixels())
            guard TableCells.looksTabular(rows, width: image.width) else { return (image, []) }
            return (image, [Leptonica.Box(x: 0, y: 0, width: image.width, height: image.height)])
        } catch {
            throw PageFailure(stage: stage, code: .internalError, message: "tables: \(error.description)")
        }
    }

    /// Reads each of `tables` in `image` again, as one block and cell by cell, with `reader`, and keeps the
    /// reading that holds the most confidently read characters where it is surer than `result`'s; returns how many
    /// tables were replaced.
    static func rereadTables(_ result: inout PageResult, image: Pix, tables: [Leptonica.Box], with reader: TesseractEngine,
                             resolution: Int, uncorrected: UncorrectedImage? = nil) -> Int {
        guard !tables.isEmpty else { return 0 }
        let readings = reader.recognize(image, regions: tables, mode: .singleBlock, resolution: resolution > 0 ? resolution : nil)
        var replaced = 0
        for (table, reading) in zip(tables, readings) {
            let region = Rect(x: table.x, y: table.y, width: table.width, height: table.height)
            var candidates: [PageResult] = []
            if let reading { candidates.append(withoutDrawnRules(PageResult(reading, resolution: resolution))) }
            if let cells = readCells(of: table, in: image, with: reader, resolution: resolution, uncorrected: uncorrected) {
                candidates.append(withoutDrawnRules(cells))
            }
            guard let again = candidates.max(by: { confidentCharacters($0.words) < confidentCharacters($1.words) }) else { continue }
            let inside = result.words.filter { contains(region, $0.box) }
            guard confidentCharacters(again.words) > Int(tableMargin * Double(confidentCharacters(inside))) else { continue }
            result.removeWords { contains(region, $0.box) }
            result.blocks += again.blocks
            replaced += 1
        }
        if replaced > 0 { result.text = text(of: result) }
        return replaced
    }

    /// A table's rows are enlarged to about this height in pixels before its cells are read (an x-height of about
    /// 25 px, where Tesseract's recognizer reads small digits best). pubtabnet-sample, `ocrfarm ocr`, cubic
    /// enlargement: rows of 24 px word F1 0.675, 32 px 0.681, 44 px 0.693, 56 px 0.686 (at most 8×).
    static let cellRowHeight = 44.0
    /// The enlargement of a table for its cells is at most this: the crops' smallest print (rows 5-7 px high) is
    /// read at 6× (0.693; at most 4×, the same rows of 44 px read 0.681).
    static let maximumCellScale = 6.0
    /// White about each cell on the sheet it is read from, in pixels of the enlarged table.
    static let cellMargin = 10
    /// The enlarged table holds at most this many pixels (a large table of small print is enlarged less).
    static let maximumCellPixels = 48_000_000.0

    /// `table` of `image` read cell by cell (`TableCells`), each cell as one line, the table enlarged first so its
    /// rows are `cellRowHeight` high; nil when it has no cells or cannot be enlarged. One block, a line per row,
    /// in `image`'s coordinates.
    static func readCells(of table: Leptonica.Box, in image: Pix, with reader: TesseractEngine, resolution: Int,
                          uncorrected: UncorrectedImage? = nil) -> PageResult? {
        // The file's own pixels when the page kept them: the corrected page was enlarged once already, and a
        // second enlargement of its interpolated pixels reads worse than one of the file's (pubtabnet-sample, cells
        // read from the corrected page: word F1 0.61; from the file's pixels: see the report).
        var source = image, toPage: Homography?, region = table
        if let uncorrected, let back = uncorrected.toPage.inverse {
            let mapped = Rect(x: table.x, y: table.y, width: table.width, height: table.height)
                .mapped(through: back, width: uncorrected.image.width, height: uncorrected.image.height)
            if mapped.width > 4, mapped.height > 4 {
                source = uncorrected.image
                toPage = uncorrected.toPage
                region = Leptonica.Box(x: mapped.x, y: mapped.y, width: mapped.width, height: mapped.height)
            }
        }
        let crop: Pix, rows: [[Leptonica.Box]]
        do throws(LeptonicaError) {
            crop = try source.cropped(to: region)
            rows = TableCells.cells(try crop.grayPixels())
        } catch {
            return nil
        }
        guard !rows.isEmpty else { return nil }
        let heights = rows.map { $0[0].height }.sorted()
        let room = (maximumCellPixels / Double(max(1, crop.width * crop.height))).squareRoot()
        let factor = min(maximumCellScale, room, max(1, cellRowHeight / Double(heights[heights.count / 2])))
        // Enlarged by cubic convolution, not Leptonica's linear interpolation, which blurs small digits' strokes
        // together (pubtabnet-sample, `ocrfarm ocr`: word F1 0.667 linear, 0.681 cubic, both at 32 px rows).
        let enlarged: Pix
        do throws(LeptonicaError) {
            enlarged = factor > 1.1 ? try Pix(gray: CubicScale.scaled(try crop.grayPixels(), by: factor)) : crop
        } catch {
            return nil
        }
        let scale = enlarged.width == crop.width ? 1 : factor
        // Each cell (with a little of its surroundings) is laid on a white sheet of its own, one under another:
        // read in place, a cell's rectangle cuts the glyphs of its neighbours and the rules at its edges, which
        // the recognizer reads as letters (pubtabnet-sample, cells alone: read in place word F1 0.644, on a sheet 0.648).
        let cells = cellBoxes(rows, scale: scale, width: enlarged.width, height: enlarged.height)
        guard !cells.isEmpty, let sheet = sheetOfCells(cells.map(\.source), from: enlarged, scale: scale) else { return nil }
        let (regions, offsets, sheets, paper) = (sheet.regions, sheet.offsets, sheet.sheets, sheet.paper)
        let pageScale = toPage.map { linearScale($0) } ?? 1
        let scaledResolution = resolution > 0 ? Int((Double(resolution) * scale / pageScale).rounded()) : nil
        // A cell of one character whose ink is one piece is read as a raw line: in a line mode Tesseract 5.3
        // also looks for a line made of a lone blob's inner outlines, and may never free the blobs it makes of them
        // (94 bytes on an "8" it read as nothing, found by Scripts/leakcheck); raw-line mode does not look. One-character
        // cells so read (pubtabnet-sample, `ocrfarm ocr` each page, word F1): 0.6929 all as lines, 0.6948 so;
        // every one-piece cell raw, 0.6905 (a word whose enlarged letters touch is one piece); every cell raw, 0.627.
        let modes = regions.map { region -> PageSegmentationMode in
            region.width <= region.height && inkPieces(paper, region, atMost: 2) == 1 ? .rawLine : .singleLine
        }
        // Each darkening of the sheet is read, and each cell keeps the reading its words are surest of.
        let readings = surest(sheets.map { sheet in
            reader.recognize(sheet, regions: regions, modes: modes, resolution: scaledResolution)
                .map { $0.map { PageResult($0, resolution: resolution) } }
        })
        // Back into the page's coordinates: unscaled, then moved to the table's place.
        func placed(_ box: Rect) -> Rect {
            let unscaled = box.scaled(by: 1 / scale)
            let moved = Rect(x: unscaled.x + region.x, y: unscaled.y + region.y, width: unscaled.width, height: unscaled.height)
            return toPage.map { moved.mapped(through: $0, width: image.width, height: image.height) } ?? moved
        }
        var words = [[Word]](repeating: [], count: rows.count)
        for ((cell, offset), reading) in zip(zip(cells, offsets), readings) {
            guard let read = reading else { continue }
            words[cell.row] += read.words.filter { !$0.text.isEmpty }.map { word in
                var word = word
                let box = word.box
                word.box = placed(Rect(x: box.x + offset.dx, y: box.y + offset.dy, width: box.width, height: box.height))
                return word
            }
        }
        let lines = words.filter { !$0.isEmpty }.map { Line(box: Rect.enclosing($0.map(\.box)), words: $0) }
        guard !lines.isEmpty else { return nil }
        let box = Rect.enclosing(lines.map(\.box))
        let block = Block(box: box, kind: "table", paragraphs: [Paragraph(box: box, lines: lines)])
        return PageResult(width: image.width, height: image.height, resolution: resolution, text: "", meanConfidence: 0,
                          blocks: [block])
    }

    /// Each cell of `rows` in the table enlarged by `scale` (`width` × `height`), with a little of its surroundings
    /// (an eighth of its height), and the row it is in; cells of two pixels or less left out.
    private static func cellBoxes(_ rows: [[Leptonica.Box]], scale: Double, width: Int,
                                  height: Int) -> [(row: Int, source: Leptonica.Box)] {
        var cells: [(row: Int, source: Leptonica.Box)] = []
        for (index, row) in rows.enumerated() {
            for cell in row {
                let pad = max(1, Int(Double(cell.height) * scale / 8))
                let x0 = max(0, Int(Double(cell.x) * scale) - pad), y0 = max(0, Int(Double(cell.y) * scale) - pad)
                let x1 = min(width, Int((Double(cell.x + cell.width) * scale).rounded(.up)) + pad)
                let y1 = min(height, Int((Double(cell.y + cell.height) * scale).rounded(.up)) + pad)
                guard x1 - x0 > 2, y1 - y0 > 2 else { continue }
                cells.append((index, Leptonica.Box(x: x0, y: y0, width: x1 - x0, height: y1 - y0)))
            }
        }
        return cells
    }

    /// The cells of `enlarged` laid one under another on a white sheet (`paper`), each read as its own `regions`
    /// entry; `offsets` move a box on the sheet back onto `enlarged`; `sheets`: the sheet at each darkening.
    /// Nil when the pixels cannot be read.
    private static func sheetOfCells(_ cells: [Leptonica.Box], from enlarged: Pix, scale: Double)
        -> (regions: [Leptonica.Box], offsets: [(dx: Int, dy: Int)], sheets: [Pix], paper: GrayPixels)?
    {
        // Each cell is read with `margin` of white on every side, and cells lie twice that apart so that no two
        // read regions overlap: Tesseract reads a line poorly when its rectangle ends close to the ink
        // (pubtabnet-sample, cells only, prototype: white margins of 5 px word F1 0.669, 10 px 0.697, 20 px 0.688;
        // ocrfarm, 5 px on one sheet (before): 0.664, 10 px 0.668).
        let margin = cellMargin
        let sheetWidth = cells.map(\.width).max()! + 2 * margin
        let sheetHeight = cells.reduce(margin) { $0 + $1.height + 2 * margin }
        var regions: [Leptonica.Box] = [], offsets: [(dx: Int, dy: Int)] = []
        var paper = GrayPixels(width: sheetWidth, height: sheetHeight, value: 255)
        do throws(LeptonicaError) {
            let pixels = try enlarged.grayPixels()
            var top = margin
            for box in cells {
                for y in 0..<box.height {
                    let from = (box.y + y) * pixels.width + box.x, to = (top + y) * sheetWidth + margin
                    for x in 0..<box.width { paper.data[to + x] = pixels.data[from + x] }
                }
                regions.append(Leptonica.Box(x: 0, y: top - margin, width: box.width + 2 * margin, height: box.height + 2 * margin))
                offsets.append((box.x - margin, box.y - top))
                top += box.height + 2 * margin
            }
            // Print enlarged less than twice keeps its strokes dark: it is read as it is (see `cellDarkenings`).
            let darkenings = scale >= minimumDarkenedScale ? cellDarkenings : [1]
            let sheets = try darkenings.map { gamma throws(LeptonicaError) in
                try Pix(gray: gamma == 1 ? paper : darkened(paper, gamma: gamma))
            }
            return (regions, offsets, sheets, paper)
        } catch {
            return nil
        }
    }

    /// The gamma exponents the sheet of cells is darkened with before it is read, each sheet read in full. Small
    /// print enlarged comes out with its thin strokes light gray (levels 150-200 where the file had a stroke of one
    /// pixel), unlike the dark strokes of the print the recognizer was trained on; a power of the gray level darkens
    /// them and keeps the paper white. Two strengths, each cell keeping the reading it is surer of: one strength
    /// suits thin strokes, the other bold ones and touching digits (pubtabnet-sample, Python prototype of this
    /// reading, word F1: none 0.697; gamma 2 0.715, 3 0.725, 4 0.727, 6 0.712; 3 and 5 by confidence 0.746;
    /// none, 3 and 5 0.731, as the undarkened reading is surest where it is wrong).
    static let cellDarkenings: [Double] = [3, 5]
    /// The enlargement from which the sheet of cells is darkened: a stroke of one pixel comes out gray only when
    /// spread over two or more. Receipts' rows, enlarged less, read worse darkened (SROIE 180: CER 9.5% → 13.1%;
    /// 420: 25.2% → 30.4%).
    static let minimumDarkenedScale = 2.0

    /// `pixels` with each gray level `v` made `255 · (v / 255)^gamma`: white stays white, gray strokes darken.
    static func darkened(_ pixels: GrayPixels, gamma: Double) -> GrayPixels {
        let levels = (0...255).map { UInt8((255 * pow(Double($0) / 255, gamma)).rounded()) }
        var result = pixels
        for index in result.data.indices { result.data[index] = levels[Int(result.data[index])] }
        return result
    }

    /// For each region, the reading among `variants` (each one reading per region) whose words are read surest
    /// on average; nil where no variant read a word.
    static func surest(_ variants: [[PageResult?]]) -> [PageResult?] {
        let count = variants.map(\.count).min() ?? 0
        return (0..<count).map { index in
            let read = variants.compactMap { $0[index] }.filter { $0.words.contains { !$0.text.isEmpty } }
            return read.max { meanConfidence($0.words) < meanConfidence($1.words) }
        }
    }

    /// The mean confidence of `words` that hold text.
    static func meanConfidence(_ words: [Word]) -> Double {
        let read = words.filter { !$0.text.isEmpty }
        return read.isEmpty ? 0 : read.reduce(0) { $0 + $1.confidence } / Double(read.count)
    }

    /// How many 8-connected pieces the ink of `box` in `pixels` (darker than `threshold`) makes, counted up to
    /// `atMost` (the count stops there).
    static func inkPieces(_ pixels: GrayPixels, _ box: Leptonica.Box, threshold: UInt8 = 128, atMost: Int) -> Int {
        let x0 = max(0, box.x), y0 = max(0, box.y)
        let x1 = min(pixels.width, box.x + box.width), y1 = min(pixels.height, box.y + box.height)
        guard x1 > x0, y1 > y0 else { return 0 }
        let width = x1 - x0
        var seen = [Bool](repeating: false, count: width * (y1 - y0))
        var pieces = 0, stack: [Int] = []
        for y in y0..<y1 {
            for x in x0..<x1 where !seen[(y - y0) * width + x - x0] && pixels[x, y] < threshold {
                pieces += 1
                if pieces >= atMost { return pieces }
                seen[(y - y0) * width + x - x0] = true
                stack.append((y - y0) * width + x - x0)
                while let at = stack.popLast() {
                    let cx = at % width + x0, cy = at / width + y0
                    for ny in max(y0, cy - 1)...min(y1 - 1, cy + 1) {
                        for nx in max(x0, cx - 1)...min(x1 - 1, cx + 1) {
                            let index = (ny - y0) * width + nx - x0
                            if !seen[index] && pixels[nx, ny] < threshold {
                                seen[index] = true
                                stack.append(index)
                            }
                        }
                    }
                }
            }
        }
        return pieces
    }

    /// The letters and digits of the words read at least `confidentWord` surely. Marks are not counted: a rule
    /// printed as a row of dashes, which the page layout analysis leaves out as a separator, reads as confident
    /// "- - - -" in a table's block or cells (SROIE 495 read raw: CER 63.7% with its rules read as dashes, 14.4% for
    /// the tesseract CLI), and must not make a table reading look surer than the page's.
    static func confidentCharacters(_ words: [Word]) -> Int {
        words.filter { $0.confidence >= confidentWord }.reduce(0) { $0 + $1.text.filter { $0.isLetter || $0.isNumber }.count }
    }

    /// Marks a rule is drawn with when it is printed as characters (receipts' separators).
    static let ruleMarks: Set<Character> = ["-", "=", "_", "~", "—", "–", ".", "'", "‘", "’", "·", ":"]

    /// Whether `line` is a rule drawn in characters: at least `drawnRuleMarks` rule marks, and more than half of its
    /// characters. A cell's lone dash or dots ("no value") is the table's text, not a rule.
    static func isDrawnRule(_ line: Line) -> Bool {
        let characters = line.words.flatMap { Array($0.text) }
        let marks = characters.filter(ruleMarks.contains).count
        return marks >= drawnRuleMarks && 2 * marks > characters.count
    }

    /// The fewest marks a rule drawn in characters is made of.
    static let drawnRuleMarks = 4

    /// A table's reading without the lines that are rules drawn in characters: the page layout analysis takes such
    /// rows for separators and reads none of them, while a table's block or cells read each dash.
    static func withoutDrawnRules(_ reading: PageResult) -> PageResult {
        var reading = reading
        reading.removeLines(where: isDrawnRule)
        return reading
    }

    /// Whether the center of `box` lies in `region`.
    static func contains(_ region: Rect, _ box: Rect) -> Bool {
        let x = box.x + box.width / 2, y = box.y + box.height / 2
        return x >= region.x && x < region.maxX && y >= region.y && y < region.maxY
    }
}
