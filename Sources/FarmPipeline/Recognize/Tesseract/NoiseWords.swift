import FarmCore

/// Scraps the engine itself doubts most are left out of the reading: what Tesseract reads at under 30 confidence
/// in a paper's formulas and figures, or a receipt's stains, is mostly symbol soup and one- or two-letter pieces
/// ("Ny", "C!xM1", "+4", "S{Xy"), which make up much of what a page reads that is not on it.
///
/// A doubtful word that holds three letters in a row is kept: on scans those are real words misread by a letter or
/// two ("ndture", "gnodify,"), and dropping them turned each small error into a whole missing word (all words under
/// 30 dropped: synthetic scan CER 0.91% → 1.73%, clean 0.06% → 0.65%). Measured with scraps only (release build,
/// first 20 docbank-sample pages with `score.py --nfkc`, first 10 SROIE receipts with `--fold-case`, first 12 of each
/// synthetic set; numbers kept as below): docbank F1 0.8723 → 0.8749; SROIE F1 0.845 → 0.853, CER 15.3% → 14.5%; scan
/// CER 0.91% → 0.83%; photo 0.36% → 0.37% (2 characters); clean unchanged at 0.06%.
///
/// Numbers are kept too: a table's cells are what users search it for (pubtabnet-sample, all 20: F1 0.5720 →
/// 0.5739; its CER rises 37.5% → 39.3%, the dropped scraps being dashes and brackets of the cells).
///
/// Doubtful words whose boxes no text of the page could fill (rules and specks read as letters) are noise too,
/// whatever their letters (`WordShape`).
///
/// A page whose reading is mostly doubtful keeps it whole: there the doubtful words are the reading.
enum NoiseWords {
    /// Words read at less than this confidence (0–100), without a letter run, are noise.
    static let confidenceFloor = 30.0
    /// The share of a page's words that may be noise for any of them to be dropped.
    static let largestShare = 0.5
    /// A doubtful word with this many letters in a row is a word misread, not noise: it is kept.
    static let letterRun = 3

    /// Whether `text` holds `letterRun` letters in a row: a word of the language, however doubtfully read.
    static func holdsLetterRun(_ text: String) -> Bool {
        var run = 0
        for character in text {
            run = character.isLetter ? run + 1 : 0
            if run >= letterRun { return true }
        }
        return false
    }

    /// Whether `text` is a number as tables and receipts print them ("12", "0.5%", "(3)", "-1,200."): what users
    /// search a table for, kept however doubtfully read.
    static func isNumber(_ text: String) -> Bool {
        var body = Substring(text)
        while let last = body.last, ".,;:)]".contains(last) { body.removeLast() }
        while let first = body.first, "([+-±−".contains(first) { body.removeFirst() }
        guard let first = body.first, first.isNumber else { return false }
        return body.allSatisfy { $0.isNumber || ".,%".contains($0) }
    }

    /// `result` without its noise words (and without the lines, paragraphs and blocks they leave empty), and how
    /// many words that was. Words in `kept` (the user's custom words) are never noise.
    static func removed(from result: PageResult, keeping kept: Set<String> = []) -> (result: PageResult, removed: Int) {
        let words = result.words
        let textHeight = WordShape.medianTextHeight(of: words)
        func isNoise(_ word: Word) -> Bool {
            guard !kept.contains(word.text) else { return false }
            return (word.confidence < confidenceFloor && !holdsLetterRun(word.text) && !isNumber(word.text))
                || WordShape.isOutOfShape(word, textHeight: textHeight)
        }
        let noise = words.filter(isNoise).count
        guard noise > 0, Double(noise) <= largestShare * Double(words.count) else { return (result, 0) }
        var result = result
        result.removeWords(where: isNoise)
        return (result, noise)
    }
}
