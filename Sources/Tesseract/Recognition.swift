import Leptonica

/// One reading of a word or symbol, with the engine's confidence (0–100).
public struct Choice: Sendable, Equatable {
    public let text: String
    public let confidence: Double

    public init(text: String, confidence: Double) {
        self.text = text
        self.confidence = confidence
    }
}

/// A recognized word: its best reading, box in the recognized image, confidence and other readings.
public struct RecognizedWord: Sendable {
    public let text: String
    public let box: Box
    /// 0–100.
    public let confidence: Double
    /// Other readings, best first, each with its confidence; the best reading is first. Empty unless the engine
    /// was asked for candidates.
    public let candidates: [Choice]
    public let isFromDictionary: Bool
    public let isNumeric: Bool
    /// The language whose model read this word, e.g. "eng" or "chi_sim".
    public let language: String?
    public let isBold: Bool
    public let isItalic: Bool
    /// The font size Tesseract estimated, in points (0 when unknown).
    public let pointSize: Int
}

/// A text line: its box, baseline, and words in reading order.
public struct RecognizedLine: Sendable {
    public let box: Box
    /// Two points on the baseline (left and right), in image pixels.
    public let baseline: (x1: Int, y1: Int, x2: Int, y2: Int)?
    public let words: [RecognizedWord]
}

/// A paragraph of lines.
public struct RecognizedParagraph: Sendable {
    public let box: Box
    public let lines: [RecognizedLine]
}

/// A layout block.
public struct RecognizedBlock: Sendable {
    public let box: Box
    public let kind: BlockKind
    public let paragraphs: [RecognizedParagraph]
}

/// What Tesseract's layout analysis thinks a block is.
public enum BlockKind: String, Sendable {
    case text, heading, pullout, equation, table, verticalText, caption, image, line, noise, unknown
}

/// Everything the engine found on one page.
public struct Recognition: Sendable {
    /// The size of the recognized image.
    public let width: Int
    public let height: Int
    public let blocks: [RecognizedBlock]
    /// Plain text in Tesseract's reading order.
    public let text: String
    /// Mean word confidence 0–100 (0 for a page with no words).
    public let meanConfidence: Double

    public var words: [RecognizedWord] { blocks.flatMap { $0.paragraphs.flatMap { $0.lines.flatMap(\.words) } } }

    /// Plain text laid out the way Tesseract's `GetUTF8Text` does it: words joined by spaces, each line ending in a
    /// newline, and an empty line between paragraphs.
    public static func text(of blocks: [RecognizedBlock]) -> String {
        blocks.flatMap(\.paragraphs).map { paragraph in
            paragraph.lines.map { $0.words.map(\.text).joined(separator: " ") + "\n" }.joined()
        }.joined(separator: "\n")
    }
    public var lines: [RecognizedLine] { blocks.flatMap { $0.paragraphs.flatMap(\.lines) } }
}

/// Orientation and script of a page (OSD).
public struct OrientationResult: Sendable, Equatable {
    /// How far the page must be turned clockwise to be upright: 0, 90, 180 or 270.
    public let rotation: Int
    public let confidence: Double
    /// The script that dominates, e.g. "Latin", "Han", "Cyrillic".
    public let script: String
    public let scriptConfidence: Double
}

enum CandidateSearch {
    /// The `limit` most likely readings of a word from the alternatives for each of its symbols (probabilities
    /// multiply; confidences are 0–100), best first. The search keeps a beam of `limit` partial readings per symbol.
    static func wordCandidates(_ symbols: [[Choice]], limit: Int) -> [Choice] {
        guard limit > 0, !symbols.isEmpty else { return [] }
        var beam: [(text: String, logProbability: Double)] = [("", 0)]
        for choices in symbols {
            let usable = choices.isEmpty ? [Choice(text: "", confidence: 100)] : choices
            var next: [(text: String, logProbability: Double)] = []
            for partial in beam {
                for choice in usable {
                    let probability = min(max(choice.confidence / 100, 1e-6), 1)
                    next.append((partial.text + choice.text, partial.logProbability + log(probability)))
                }
            }
            next.sort { $0.logProbability > $1.logProbability }
            var seen = Set<String>()
            beam = next.filter { seen.insert($0.text).inserted }.prefix(limit).map { $0 }
        }
        return beam.map { Choice(text: $0.text, confidence: (exp($0.logProbability) * 1000).rounded() / 10) }
    }
}

#if canImport(Glibc)
import Glibc
#endif
