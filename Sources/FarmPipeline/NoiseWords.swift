import FarmCore

/// Words the engine itself doubts most are left out of the reading: what Tesseract reads at under 30 confidence on
/// real pages is mostly the texture of figures, formulas and stains taken for letters ("Staghetinatien",
/// "gLag", "Xj"), and it makes up most of what a page reads that is not on it.
///
/// Measured on the first 20 docbank-sample pages (order-free word F1, `--nfkc`): of the 350 words under 30, 243
/// matched nothing in the GT; F1 0.872 → 0.876. On 10 SROIE receipts (`--fold-case`), 0.845 → 0.855. The bar is
/// the engine's own scale, not fitted to a page: F1 is flat from 30 to 50 on both sets, and falls off below 20.
///
/// A page (or the run of it being read) whose reading is mostly doubtful keeps it whole: there the doubtful words
/// are the reading, and a weak reading is more use to a search than none.
enum NoiseWords {
    /// Words read at less than this confidence (0–100) are noise.
    static let confidenceFloor = 30.0
    /// The share of a page's words that may be noise for any of them to be dropped.
    static let largestShare = 0.5

    /// `result` without its noise words (and without the lines, paragraphs and blocks they leave empty), and how
    /// many words that was. Words in `kept` (the user's custom words) are never noise.
    static func removed(from result: PageResult, keeping kept: Set<String> = []) -> (result: PageResult, removed: Int) {
        func isNoise(_ word: Word) -> Bool { word.confidence < confidenceFloor && !kept.contains(word.text) }
        let words = result.words
        let noise = words.filter(isNoise).count
        guard noise > 0, Double(noise) <= largestShare * Double(words.count) else { return (result, 0) }
        var result = result
        result.blocks = result.blocks.compactMap { block in
            var block = block
            block.paragraphs = block.paragraphs.compactMap { paragraph in
                var paragraph = paragraph
                paragraph.lines = paragraph.lines.compactMap { line in
                    var line = line
                    line.words.removeAll(where: isNoise)
                    return line.words.isEmpty ? nil : line
                }
                return paragraph.lines.isEmpty ? nil : paragraph
            }
            return block.paragraphs.isEmpty ? nil : block
        }
        return (result, noise)
    }
}
