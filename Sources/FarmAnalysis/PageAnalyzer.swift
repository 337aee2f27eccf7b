import ICU

/// A page's language and keywords from its recognized text, with one word segmentation serving both.
///
/// Owns a `WordBreaker` (an ICU iterator), made once and reused for every page. Not `Sendable`: one analyzer per
/// page slot.
public final class PageAnalyzer {
    private let breaker: WordBreaker

    public init() throws(ICUError) { breaker = try WordBreaker() }

    /// The language (nil when the text has no words in the page's scripts) and keywords of `text`.
    /// `confidence`: the best confidence each word (lower-cased) was read with, which keeps OCR debris out of the
    /// keywords (`Keywords.extract`).
    public func analyze(_ text: String, languages: [String], confidence: [String: Double]? = nil) -> (language: String?, keywords: [String]) {
        let tokens = breaker.tokens(in: text)
        return (PageLanguage.detect(tokens: tokens, languages: languages),
                Keywords.extract(from: tokens, languages: languages, confidence: confidence))
    }
}
