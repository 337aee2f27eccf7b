import FarmCore

#if canImport(Glibc)
import Glibc
#endif

/// A page's quality figure (`PageQuality`), from its reading and the page image that was read, with no further OCR.
///
/// Three parts, each 0…1:
/// - **c**, the confidence: mean word confidence weighted by word length (what Tesseract itself thinks of the reading);
/// - **d**, the dictionary share: of the words a word list can vouch for (three letters or more, no digits), the share
///   Tesseract found in its language's dictionary (noise and garble read as letters are rarely words). Left out on
///   pages read without word lists (Chinese, Japanese, `--no-language-correction`, the neural engine) and on pages with fewer than
///   `fewestCheckable` such words, where a share says little;
/// - **k**, the ink share: of the page's dark pixels (the page binarized at Otsu's threshold, at most
///   `darkestPaper`), the share inside a recognized word's box (grown by a little for the strokes' edges). Ink in
///   what the layout analysis called a picture or a rule is neither counted nor held against the page. Text the
///   reading missed, and speckle, leave ink outside the words. Left out on a page without ink.
///
/// The figure is their weighted geometric mean, `c^(2/4) · d^(1/4) · k^(1/4)` (weights renormalised over the parts
/// present; each part floored at 0.01): every part must hold for the figure to be high, and the engine's own
/// confidence, the only part that looks at every character, weighs as much as the two checks together. The
/// weights are round numbers chosen by that argument, not fitted to pages. A page on which nothing was read has
/// figure 0 (a blank page is worth a look: it may be a page the reading lost).
///
/// The worst region is the line (of `shortestLine` characters or more, else any) with the lowest confidence, and
/// the worst block the text block (of `fewestBlockWords` words or more, else any) with the lowest figure of its own.
public enum QualityFigure {
    static let weights = (confidence: 2.0, dictionary: 1.0, ink: 1.0)
    static let fewestCheckable = 3
    static let shortestLine = 3
    /// A block of fewer words (a page number, a lone stray mark) is the worst block only when no block is larger.
    static let fewestBlockWords = 3
    /// Pixels at least this light are paper, whatever Otsu says (a blank page's threshold splits its paper's noise).
    static let darkestPaper = 140
    /// About how many pixels the ink is counted on: enough for a share, cheap on a 600 dpi page.
    public static let inkSamples = 2_000_000.0
    /// A page with less than this share of dark pixels has no ink to speak of.
    static let leastInk = 0.0005

    /// The figure of `result`; `gray` is the page that was read as 8-bit gray (any size: boxes are scaled to it),
    /// nil when it is not at hand (then k is left out). `usesDictionary`: the page was read with word lists.
    public static func measure(_ result: PageResult, gray: (width: Int, height: Int, pixels: [UInt8])?,
                               usesDictionary: Bool) -> PageQuality
    {
        let words = result.words.filter { !Scripts.trimmed($0.text).isEmpty }
        let ink = gray.flatMap { inkShare(result, gray: $0) }
        guard !words.isEmpty else {
            return PageQuality(figure: 0, confidence: 0, dictionary: nil, ink: ink, words: 0, worst: nil)
        }
        let (confidence, dictionary) = readingParts(words, usesDictionary: usesDictionary)
        var parts = [(confidence, weights.confidence)]
        if let dictionary { parts.append((dictionary, weights.dictionary)) }
        if let ink { parts.append((ink, weights.ink)) }
        let totalWeight = parts.map(\.1).reduce(0, +)
        let figure = exp(parts.map { log(max($0.0, 0.01)) * $0.1 }.reduce(0, +) / totalWeight)
        return PageQuality(figure: min(max(figure, 0), 1), confidence: confidence, dictionary: dictionary, ink: ink,
                           words: words.count, worst: worstLine(result),
                           worstBlock: worstBlock(result, usesDictionary: usesDictionary))
    }

    /// c and d of `words` (module comment).
    static func readingParts(_ words: [Word], usesDictionary: Bool) -> (confidence: Double, dictionary: Double?) {
        let lengths = words.map { Double(max(1, $0.text.count)) }
        let confidence = zip(words, lengths).map { min(max($0.confidence, 0), 100) * $1 }.reduce(0, +)
            / max(lengths.reduce(0, +), 1) / 100
        var dictionary: Double?
        if usesDictionary {
            let checkable = words.filter { word in
                word.text.filter(\.isLetter).count >= 3 && !word.text.contains(where: \.isNumber)
            }
            if checkable.count >= fewestCheckable {
                dictionary = Double(checkable.filter(\.fromDictionary).count) / Double(checkable.count)
            }
        }
        return (confidence, dictionary)
    }

    /// The text block with the lowest figure of its own, among blocks of `fewestBlockWords` words or more when
    /// there are any: c and d over the block's words, weighted as in the page figure (k is a page measure: the
    /// ink outside any word has no block). Where the page mean hides a bad column, caption or stamp, this shows it.
    static func worstBlock(_ result: PageResult, usesDictionary: Bool) -> PageQuality.BlockFigure? {
        let blocks = result.blocks.compactMap { block -> PageQuality.BlockFigure? in
            let words = block.paragraphs.flatMap { $0.lines.flatMap(\.words) }.filter { !Scripts.trimmed($0.text).isEmpty }
            guard !words.isEmpty else { return nil }
            let (confidence, dictionary) = readingParts(words, usesDictionary: usesDictionary)
            var parts = [(confidence, weights.confidence)]
            if let dictionary { parts.append((dictionary, weights.dictionary)) }
            let figure = exp(parts.map { log(max($0.0, 0.01)) * $0.1 }.reduce(0, +) / parts.map(\.1).reduce(0, +))
            return PageQuality.BlockFigure(box: block.box, figure: min(max(figure, 0), 1), words: words.count)
        }
        let large = blocks.filter { $0.words >= fewestBlockWords }
        return (large.isEmpty ? blocks : large).min { $0.figure < $1.figure }
    }

    /// The line with the lowest length-weighted confidence, among lines of `shortestLine` characters or more when
    /// there are any.
    static func worstLine(_ result: PageResult) -> PageQuality.Region? {
        let lines = result.lines.filter { !$0.words.isEmpty }
        let long = lines.filter { $0.words.map { $0.text.count }.reduce(0, +) >= shortestLine }
        guard let worst = (long.isEmpty ? lines : long).min(by: { $0.confidence < $1.confidence }) else { return nil }
        return PageQuality.Region(box: worst.box, confidence: worst.confidence / 100, text: worst.text)
    }

    /// The share of the page's ink inside word boxes (module comment); nil without ink.
    static func inkShare(_ result: PageResult, gray: (width: Int, height: Int, pixels: [UInt8])) -> Double? {
        let (width, height) = (gray.width, gray.height)
        guard width > 0, height > 0, gray.pixels.count >= width * height else { return nil }
        // A sample grid of about `inkSamples` points (a page sampled down to that already has step 1).
        let step = max(1, Int((Double(width * height) / inkSamples).squareRoot().rounded()))
        let columns = (width + step - 1) / step, rows = (height + step - 1) / step
        var histogram = [Int](repeating: 0, count: 256)
        for row in 0..<rows {
            let base = row * step * width
            for column in 0..<columns { histogram[Int(gray.pixels[base + column * step])] += 1 }
        }
        let threshold = min(otsuThreshold(histogram), darkestPaper)
        let dark = histogram[..<threshold].reduce(0, +)
        guard Double(dark) >= leastInk * Double(columns * rows) else { return nil }

        // Each sample's region: 0 none, 1 picture or rule (not counted), 2 a word.
        var region = [UInt8](repeating: 0, count: columns * rows)
        let scaleX = result.width > 0 ? Double(width) / Double(result.width) : 1
        let scaleY = result.height > 0 ? Double(height) / Double(result.height) : 1
        func mark(_ box: Rect, pad: Int, as value: UInt8) {
            let x0 = max(0, Int((Double(box.x - pad) * scaleX) / Double(step)))
            let y0 = max(0, Int((Double(box.y - pad) * scaleY) / Double(step)))
            let x1 = min(columns - 1, Int((Double(box.maxX + pad) * scaleX) / Double(step)))
            let y1 = min(rows - 1, Int((Double(box.maxY + pad) * scaleY) / Double(step)))
            guard x0 <= x1, y0 <= y1 else { return }
            for y in y0...y1 { for x in x0...x1 { region[y * columns + x] = max(region[y * columns + x], value) } }
        }
        for block in result.blocks where ["image", "line"].contains(block.kind) { mark(block.box, pad: 0, as: 1) }
        for word in result.words where !Scripts.trimmed(word.text).isEmpty {
            // Word boxes hug the glyphs: the strokes' gray edges and i-dots fall just outside.
            mark(word.box, pad: 2 + word.box.height / 10, as: 2)
        }
        var inWords = 0, counted = 0
        for row in 0..<rows {
            let base = row * step * width
            for column in 0..<columns where Int(gray.pixels[base + column * step]) < threshold {
                switch region[row * columns + column] {
                case 2: inWords += 1; counted += 1
                case 0: counted += 1
                default: break
                }
            }
        }
        return counted > 0 ? Double(inWords) / Double(counted) : nil
    }

    /// Otsu's threshold of a 256-bin histogram: the gray level (first paper level) that best separates dark from light.
    public static func otsuThreshold(_ histogram: [Int]) -> Int {
        let total = Double(histogram.reduce(0, +))
        guard total > 0 else { return 0 }
        let sum = histogram.enumerated().map { Double($0.offset * $0.element) }.reduce(0, +)
        var backgroundWeight = 0.0, backgroundSum = 0.0, best = 0.0, threshold = 0
        for level in 0..<256 {
            backgroundWeight += Double(histogram[level])
            guard backgroundWeight > 0 else { continue }
            let foregroundWeight = total - backgroundWeight
            guard foregroundWeight > 0 else { break }
            backgroundSum += Double(level * histogram[level])
            let meanDark = backgroundSum / backgroundWeight
            let meanLight = (sum - backgroundSum) / foregroundWeight
            let between = backgroundWeight * foregroundWeight * (meanDark - meanLight) * (meanDark - meanLight)
            if between > best { best = between; threshold = level + 1 }
        }
        return threshold
    }
}
