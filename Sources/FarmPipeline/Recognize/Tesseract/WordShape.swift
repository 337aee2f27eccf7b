import FarmCore

/// Words whose boxes no letter or digit of the page could fill: a rule, a dashed separator, a stain's edge or a
/// speck that the engine read as letters ("EEE" over a receipt's dashed rule 323 pixels wide and 10 high, "ween"
/// 4 pixels high on a page of 18-pixel text, "FY" in a box of 2 × 2). Their letters are no misread word (the
/// letter-run rule of `NoiseWords` keeps those) but marks of another shape, so they are told by the box, which
/// the engine measures on the ink, not by the text it guessed.
///
/// Two round limits, far from the shapes of print: a word is out of shape when its box is less than a quarter of
/// the page's median text height (lower-case words stand at the x-height, about half the height of a word with
/// capitals or descenders; sub- and superscripts at about two thirds of that), or when each of its characters is
/// on average more than three times as wide as the box is high (the widest letters, "W" and "m", are about as wide
/// as high). Only doubtful words go: below `confidenceCeiling`, the confidence a line read only by a second reading
/// must reach to be added (`TesseractRecognizer.addedLineConfidence`). Words without letters or digits (dashes,
/// rules read as "___") are left to the text rules: a dash is flat and wide by nature.
///
/// Measured on the 42 SROIE receipts (release build, `score.py --fold-case`, fast): 27 words dropped, all noise;
/// CER 17.53% → 17.31%, F1 0.8406 → 0.8423 (offline on the JSON of the same run).
enum WordShape {
    /// A word lower than this share of the page's median text height is not text of the page.
    static let lowestShare = 0.25
    /// A word whose characters are on average wider than this many times its height is not text.
    static let widestCharacter = 3.0
    /// Words the engine is at least this sure of are kept whatever their box.
    static let confidenceCeiling = 70.0

    /// The median height of the page's words that hold a letter or digit; 0 when there are none.
    static func medianTextHeight(of words: [Word]) -> Int {
        let heights = words.filter(holdsText).map(\.box.height).sorted()
        return heights.isEmpty ? 0 : heights[heights.count / 2]
    }

    /// Whether `word`, doubtful and holding a letter or digit, has a box no text of `textHeight` could have.
    static func isOutOfShape(_ word: Word, textHeight: Int) -> Bool {
        guard word.confidence < confidenceCeiling, holdsText(word), textHeight > 0 else { return false }
        let box = word.box
        let tooLow = Double(box.height) < lowestShare * Double(textHeight)
        let tooWide = Double(box.width) > widestCharacter * Double(max(1, box.height)) * Double(word.text.count)
        return tooLow || tooWide
    }

    /// Whether `word` holds a letter or digit (what a shape of text is measured on).
    static func holdsText(_ word: Word) -> Bool {
        word.text.contains { $0.isLetter || $0.isNumber }
    }
}
