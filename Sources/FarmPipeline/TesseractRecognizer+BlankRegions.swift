import FarmCore
import Leptonica
import Tesseract

/// Regions where the page layout analysis found a line's worth of ink and read nothing from it: print larger or
/// bolder than the rest of the page (a receipt's total, cash and change rows), taken for a picture, come back as a
/// line without words. Tesseract's page segmentation decided there was no text there; read alone as one block of
/// text (single-block segmentation) the same pixels read (SROIE 150: "Total 30.00 / Cash 50.00 / Change 20.00"
/// an empty line at full-page segmentation, read in a block at confidence 80 and more).
///
/// Only regions of the size of a few text lines are read: a region lower than half the page's median text height
/// holds no letter of it, and one taller than `blankRegionRows` text heights is a picture (a logo, a photo, a stamp),
/// where a block reading would find letters in the shading. What a region reads is kept line by line on the terms
/// of a line found only by a second reading (`addMissedLines`): confident, with a word of two letters or digits,
/// over no word already read; the lines take the empty line's place, so the page's text keeps its order.
extension TesseractRecognizer {
    /// A blank region taller than this many median text heights is a picture, not rows of text.
    static let blankRegionRows = 8
    /// The most blank regions read on a page (a page of pictures must not take seconds).
    static let maximumBlankRegions = 20

    /// Reads again, each as one block, the lines of `result` that hold no letter or digit and are the size of a few
    /// text lines; puts the confident lines read in their place. Returns the findings: regions read, filled, lines.
    func readBlankRegions(_ result: inout PageResult, image: Pix, resolution: Int) -> JSON {
        let textHeight = WordShape.medianTextHeight(of: result.words)
        var places: [(block: Int, paragraph: Int, line: Int, box: Rect)] = []
        for b in result.blocks.indices {
            for p in result.blocks[b].paragraphs.indices {
                for (l, line) in result.blocks[b].paragraphs[p].lines.enumerated()
                where Self.isBlank(line) && Self.mayHoldRows(line.box, textHeight: textHeight) {
                    places.append((b, p, l, line.box))
                }
            }
        }
        places = Array(places.prefix(Self.maximumBlankRegions))
        guard !places.isEmpty else { return .object([("read", 0)]) }
        let pad = max(2, textHeight / 4)
        let regions = places.map { place in
            Leptonica.Box(x: max(0, place.box.x - pad), y: max(0, place.box.y - pad),
                          width: min(image.width, place.box.maxX + pad) - max(0, place.box.x - pad),
                          height: min(image.height, place.box.maxY + pad) - max(0, place.box.y - pad))
        }
        let readings = engine.recognize(image, regions: regions, mode: .singleBlock, resolution: resolution > 0 ? resolution : nil)
        var filled = 0, added = 0
        // From the last place back, so that a line replaced by several leaves the places before it where they are.
        for (place, reading) in zip(places, readings).reversed() {
            guard let reading else { continue }
            let read = result.words.filter(WordShape.holdsText).map(\.box)
            let lines = PageResult(reading, resolution: resolution).lines.filter { Self.isMissedLine($0, over: read) }
            guard !lines.isEmpty else { continue }
            result.blocks[place.block].paragraphs[place.paragraph].lines.replaceSubrange(place.line...place.line, with: lines)
            if result.blocks[place.block].kind != BlockKind.text.rawValue { result.blocks[place.block].kind = BlockKind.text.rawValue }
            filled += 1
            added += lines.count
        }
        if filled > 0 { result.text = Self.text(of: result) }
        return .object([("read", JSON(regions.count)), ("filled", JSON(filled)), ("lines", JSON(added))])
    }

    /// Whether `line` holds no letter or digit (no words, or only blanks and marks).
    static func isBlank(_ line: Line) -> Bool {
        !line.words.contains(where: WordShape.holdsText)
    }

    /// Whether `box` could hold rows of the page's text: at least half a text height high and two wide, at most
    /// `blankRegionRows` text heights high.
    static func mayHoldRows(_ box: Rect, textHeight: Int) -> Bool {
        guard textHeight > 0 else { return false }
        return 2 * box.height >= textHeight && box.width >= 2 * textHeight && box.height <= blankRegionRows * textHeight
    }
}
