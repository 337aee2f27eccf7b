import CICU

/// What ICU's word rules say a segment is (its rule status).
public enum WordKind: Sendable, Equatable {
    /// Spaces, punctuation, symbols: not a word.
    case none
    case number
    /// Words of letters: Latin, Cyrillic, Greek, Hangul, Thai…
    case letter
    /// Japanese kana.
    case kana
    /// Han ideographs: a Chinese (or Japanese kanji) word, found with ICU's dictionary.
    case ideographic

    init(ruleStatus: Int32) {
        switch UInt32(clamping: ruleStatus) {
        case ..<UBRK_WORD_NONE_LIMIT.rawValue: self = .none
        case ..<UBRK_WORD_NUMBER_LIMIT.rawValue: self = .number
        case ..<UBRK_WORD_LETTER_LIMIT.rawValue: self = .letter
        case ..<UBRK_WORD_KANA_LIMIT.rawValue: self = .kana
        case ..<UBRK_WORD_IDEO_LIMIT.rawValue: self = .ideographic
        default: self = .none
        }
    }

    /// Letters, kana or ideographs: a word of language rather than a number or punctuation.
    public var isWord: Bool { self == .letter || self == .kana || self == .ideographic }
}

/// One segment of a text between two word boundaries.
public struct WordToken: Sendable, Equatable {
    public let text: String
    public let kind: WordKind

    public init(text: String, kind: WordKind) {
        self.text = text
        self.kind = kind
    }
}

/// Splits text into words with ICU's word break rules (Unicode UAX #29, and ICU's dictionaries for text without
/// spaces: Chinese and Japanese come out as words such as 图书馆, not one token per character).
///
/// Owns one `UBreakIterator`, opened in `init` and closed with `ubrk_close` in `deinit`. The iterator points into
/// the text only while `tokens(in:)` runs. Not `Sendable`: use one breaker per thread, and reuse it across texts
/// (opening one costs far more than a page's segmentation).
public final class WordBreaker {
    private let iterator: OpaquePointer

    /// A word breaker for `locale` (an ICU locale ID; "" is the root locale, which already knows CJK words).
    public init(locale: String = "") throws(ICUError) {
        var status = U_ZERO_ERROR
        let opened = ocr_ubrk_open(UBRK_WORD, locale, nil, 0, &status)
        guard ocr_u_failure(status) == 0, let opened else { throw ICUError("ubrk_open(word, \"\(locale)\")", status: status) }
        iterator = opened
    }

    deinit { ocr_ubrk_close(iterator) }

    /// The segments of `text` in order, each with its kind; whitespace-only segments are left out, punctuation
    /// and symbols come as `.none`.
    public func tokens(in text: String) -> [WordToken] {
        let units = Array(text.utf16)
        guard !units.isEmpty, units.count <= Int(Int32.max) else { return [] }
        return units.withUnsafeBufferPointer { buffer in
            var status = U_ZERO_ERROR
            ocr_ubrk_setText(iterator, buffer.baseAddress, Int32(buffer.count), &status)
            defer { ocr_ubrk_clearText(iterator) }
            guard ocr_u_failure(status) == 0 else { return [] }
            var tokens: [WordToken] = []
            var start = ocr_ubrk_first(iterator)
            while true {
                let end = ocr_ubrk_next(iterator)
                guard end != UBRK_DONE, end > start else { break }
                // Boundaries never split a surrogate pair, so every segment decodes whole.
                let segment = UnsafeBufferPointer(rebasing: buffer[Int(start)..<Int(end)])
                let token = String(decoding: segment, as: UTF16.self)
                if !token.allSatisfy(\.isWhitespace) {
                    tokens.append(WordToken(text: token, kind: WordKind(ruleStatus: ocr_ubrk_getRuleStatus(iterator))))
                }
                start = end
            }
            return tokens
        }
    }

    /// The words of `text`: the segments of letters, kana or ideographs (numbers and punctuation left out).
    public func words(in text: String) -> [String] { tokens(in: text).filter(\.kind.isWord).map(\.text) }
}
