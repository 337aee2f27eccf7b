import FarmCore
import Leptonica
import Tesseract

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
            return (found.image, found.tables)
        } catch {
            throw PageFailure(stage: stage, code: .internalError, message: "tables: \(error.description)")
        }
    }

    /// Reads each of `tables` in `image` again as one block with `reader`, and keeps its words where they are
    /// surer than `result`'s; returns how many tables were replaced.
    static func rereadTables(_ result: inout PageResult, image: Pix, tables: [Leptonica.Box], with reader: TesseractEngine,
                             resolution: Int) -> Int {
        guard !tables.isEmpty else { return 0 }
        let readings = reader.recognize(image, regions: tables, mode: .singleBlock, resolution: resolution > 0 ? resolution : nil)
        var replaced = 0
        for (table, reading) in zip(tables, readings) {
            guard let reading else { continue }
            let region = Rect(x: table.x, y: table.y, width: table.width, height: table.height)
            let again = PageResult(reading, resolution: resolution)
            let inside = result.words.filter { contains(region, $0.box) }
            guard confidentCharacters(again.words) > Int(tableMargin * Double(confidentCharacters(inside))) else { continue }
            result.blocks = removing(region, from: result.blocks) + again.blocks
            replaced += 1
        }
        if replaced > 0 { result.text = text(of: result) }
        return replaced
    }

    /// The characters of the words read at least `confidentWord` surely.
    static func confidentCharacters(_ words: [Word]) -> Int {
        words.filter { $0.confidence >= confidentWord }.reduce(0) { $0 + $1.text.count }
    }

    /// Whether the center of `box` lies in `region`.
    static func contains(_ region: Rect, _ box: Rect) -> Bool {
        let x = box.x + box.width / 2, y = box.y + box.height / 2
        return x >= region.x && x < region.maxX && y >= region.y && y < region.maxY
    }

    /// `blocks` without the words whose centers lie in `region` (and without the lines, paragraphs and blocks
    /// left empty).
    static func removing(_ region: Rect, from blocks: [Block]) -> [Block] {
        blocks.compactMap { block in
            var block = block
            block.paragraphs = block.paragraphs.compactMap { paragraph in
                var paragraph = paragraph
                paragraph.lines = paragraph.lines.compactMap { line in
                    var line = line
                    line.words.removeAll { contains(region, $0.box) }
                    return line.words.isEmpty ? nil : line
                }
                return paragraph.lines.isEmpty ? nil : paragraph
            }
            return block.paragraphs.isEmpty ? nil : block
        }
    }
}
