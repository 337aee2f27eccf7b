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
/// where a block reading would find letters in the shading. What a region reads is kept line by line, each line on
/// the terms of a line found only by a second reading (`isMissedLine`: confident, with a word of two letters or
/// digits), and:
/// - a line on no row of the first reading takes the empty line's place, so the page's text keeps its order;
/// - a line on a row where the first reading read words (the block's padding takes in a neighbouring row; large
///   print reaches into its neighbour's height) takes their place only where it reads them surer by `surerMargin`
///   points a character (`readsSurer`), and goes where the first of them was (SROIE 495: "Ss" read at confidence 32
///   over the ink the block reads as "Total Sale:" at 96). Else those words stand and the line is dropped;
/// - a line that reads all those words alike and more beside them is kept, confident or not, when the words only it
///   read are surer than not (`readsBeyond`): reading the same words as the first reading is evidence that it reads
///   the same print (SROIE 525: "> ~ 2300 HRS" where the block reads "FRI-SAT: 1000 HRS - 2300 HRS").
/// Words count as on a line's row only at its height (`sharesRow`): a word of the row above, whose foot the padded
/// block takes in, no longer keeps the block's line out (SROIE 150: "Cash 50.00" under "Total 30.00").
/// Measured: lines over nothing kept when merely surer than not (rather than confident), and lines replacing words
/// without being confident themselves, read SROIE slightly better (8 edits of 29420) and read figure labels and
/// plot marks of two DocBank pages as text (F1 0.8083 -> 0.8082).
extension TesseractRecognizer {
    /// A blank region taller than this many median text heights is a picture, not rows of text.
    static let blankRegionRows = 8
    /// The most blank regions read on a page (a page of pictures must not take seconds).
    static let maximumBlankRegions = 20

    /// Reads again, each as one block, the lines of `result` that hold no letter or digit and are the size of a few
    /// text lines, and keeps what they read on the terms above. Returns the findings: regions read, regions filled,
    /// lines kept, words of the first reading read again surer.
    func readBlankRegions(_ result: inout PageResult, image: Pix, resolution: Int) -> JSON {
        let textHeight = WordShape.medianTextHeight(of: result.words)
        var places: [(at: LineAddress, box: Rect)] = []
        for b in result.blocks.indices {
            for p in result.blocks[b].paragraphs.indices {
                for (l, line) in result.blocks[b].paragraphs[p].lines.enumerated()
                where Self.isBlank(line) && Self.mayHoldRows(line.box, textHeight: textHeight) {
                    places.append((LineAddress(block: b, paragraph: p, line: l), line.box))
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
        var choice = BlankRegionChoice(words: Self.addressedWords(of: result))
        for (place, reading) in zip(places, readings) {
            guard let reading else { continue }
            choice.consider(PageResult(reading, resolution: resolution).lines, readAt: place.at)
        }
        if !choice.isEmpty {
            choice.apply(to: &result)
            result.text = Self.text(of: result)
        }
        return .object([("read", JSON(regions.count)), ("filled", JSON(choice.filling.count)), ("lines", JSON(choice.taken.count)),
                        ("words_read_again", JSON(choice.outread.count))])
    }

    /// The words of `result` that hold a letter or digit, each with where it is.
    static func addressedWords(of result: PageResult) -> [(at: WordAddress, word: Word)] {
        var words: [(at: WordAddress, word: Word)] = []
        for b in result.blocks.indices {
            for p in result.blocks[b].paragraphs.indices {
                for (l, line) in result.blocks[b].paragraphs[p].lines.enumerated() {
                    for (w, word) in line.words.enumerated() where WordShape.holdsText(word) {
                        words.append((WordAddress(line: LineAddress(block: b, paragraph: p, line: l), word: w), word))
                    }
                }
            }
        }
        return words
    }

    /// Whether two boxes (a word's or a line's, and a line's) lie on one row: one covers more than 0.3 of the other
    /// (as `isMissedLine` measures overlap) and they are at the same height (`RowLayout.sameHeight`). A word of the
    /// row above or below that a padded block takes in by its edge is on a row of its own.
    static func sharesRow(_ a: Rect, _ b: Rect) -> Bool {
        (a.coverage(of: b) > 0.3 || b.coverage(of: a) > 0.3) && RowLayout.sameHeight(a, b)
    }

    /// Whether a block `line` is kept over the words of the first reading on its row (`under`, none when it read the
    /// row empty), on the terms of `readBlankRegions`.
    static func keeps(_ line: Line, over under: [Word]) -> Bool {
        guard !under.isEmpty else { return isMissedLine(line, over: []) }
        return isMissedLine(line, over: []) && readsSurer(line, than: under) || readsBeyond(line, repeating: under)
    }

    /// Whether a block `line` reads the words of the first reading on its row (`under`) surer: it has a word of two
    /// letters or digits, and its words are surer all together (`sureness`) than `under` by more than `surerMargin`
    /// points on each of their letters and digits, the margin of `chooseRegions`. Against no words, the line must be
    /// surer than not.
    static func readsSurer(_ line: Line, than under: [Word]) -> Bool {
        guard line.words.contains(where: { $0.text.filter { $0.isLetter || $0.isNumber }.count >= 2 }) else { return false }
        let characters = under.reduce(0) { $0 + $1.text.filter { $0.isLetter || $0.isNumber }.count }
        return sureness(line.words) > sureness(under) + Double(characters) * surerMargin / 50
    }

    /// Whether a block `line` reads every word of the first reading on its row (`under`) alike (letters and digits,
    /// case folded, as `agreement` compares them) and, beside them, words surer than not (`readsSurer` against
    /// nothing): the words both readings share are no evidence either way (SROIE 525: "> ~ 2300 HRS" at full-page
    /// segmentation, the block "FRI-SAT: 1000 HRS - 2300 HRS" at confidence 61; on all of its words the block is
    /// surer by less than the margin).
    static func readsBeyond(_ line: Line, repeating under: [Word]) -> Bool {
        func key(_ word: Word) -> String { String(word.text.filter { $0.isLetter || $0.isNumber }).lowercased() }
        var rest = line.words
        for word in under {
            guard let match = rest.firstIndex(where: { key($0) == key(word) }) else { return false }
            rest.remove(at: match)
        }
        return rest.count < line.words.count && readsSurer(Line(box: line.box, words: rest), than: [])
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

/// Where a line is in a page's model: its block, paragraph and line.
struct LineAddress: Hashable, Comparable {
    let block: Int
    let paragraph: Int
    let line: Int

    static func < (a: LineAddress, b: LineAddress) -> Bool { (a.block, a.paragraph, a.line) < (b.block, b.paragraph, b.line) }
}

/// Where a word is in a page's model: its line and its place on it.
struct WordAddress: Hashable {
    let line: LineAddress
    let word: Int
}

/// What the block readings of a page's blank regions bring, decided against the first reading before anything
/// moves (addresses stay those of the first reading until `apply`).
struct BlankRegionChoice {
    /// The first reading's words that hold text, with where they are.
    let words: [(at: WordAddress, word: Word)]
    /// The lines each blank line is replaced by.
    private(set) var filling: [LineAddress: [Line]] = [:]
    /// Lines that read words of the first reading surer: each goes before the first line it took words from.
    private(set) var before: [LineAddress: [Line]] = [:]
    /// The first reading's words read again surer, dropped from their lines.
    private(set) var outread: Set<WordAddress> = []
    /// Boxes of the block lines kept: regions are padded, so two of them may read the same row; the first keeps it.
    private(set) var taken: [Rect] = []

    init(words: [(at: WordAddress, word: Word)]) {
        self.words = words
    }

    var isEmpty: Bool { taken.isEmpty }

    /// Takes from `lines` (the block reading of the blank line at `place`) what the terms of
    /// `TesseractRecognizer.readBlankRegions` keep.
    mutating func consider(_ lines: [Line], readAt place: LineAddress) {
        var filled: [Line] = []
        for line in lines where !taken.contains(where: { TesseractRecognizer.sharesRow($0, line.box) }) {
            let under = words.filter { !outread.contains($0.at) && TesseractRecognizer.sharesRow($0.word.box, line.box) }
            guard TesseractRecognizer.keeps(line, over: under.map(\.word)) else { continue }
            if let first = under.map(\.at.line).min() {
                before[first, default: []].append(line)
                outread.formUnion(under.map(\.at))
            } else {
                filled.append(line)
            }
            taken.append(line.box)
        }
        if !filled.isEmpty { filling[place] = filled }
    }

    /// Puts the chosen lines into `result` and drops the words they read again. A line left with no letter or digit
    /// goes too: its marks were read from the same ink.
    func apply(to result: inout PageResult) {
        var emptied: [Rect] = []
        for b in result.blocks.indices {
            var changed = false
            for p in result.blocks[b].paragraphs.indices {
                var lines: [Line] = []
                for (l, line) in result.blocks[b].paragraphs[p].lines.enumerated() {
                    let at = LineAddress(block: b, paragraph: p, line: l)
                    if let placed = before[at] { lines += placed; changed = true }
                    if let placed = filling[at] { lines += placed; changed = true; continue }
                    var line = line
                    let kept = line.words.indices.filter { !outread.contains(WordAddress(line: at, word: $0)) }
                    if kept.count < line.words.count {
                        line.words = kept.map { line.words[$0] }
                        if TesseractRecognizer.isBlank(line) {
                            line.words = []
                            emptied.append(line.box)
                        } else {
                            line.box = Rect.enclosing(line.words.map(\.box), or: line.box)
                        }
                    }
                    lines.append(line)
                }
                result.blocks[b].paragraphs[p].lines = lines
            }
            if changed && result.blocks[b].kind != BlockKind.text.rawValue { result.blocks[b].kind = BlockKind.text.rawValue }
        }
        result.removeLines { $0.words.isEmpty && emptied.contains($0.box) }
    }
}
