import ICU

/// A page's keywords, the way the seed documents make them: its words in order of first appearance, without
/// function words, numbers, punctuation and one-character tokens, each once.
///
/// - Words come from ICU's word breaker, so Chinese and Japanese give dictionary words (图书馆, 历史), not one
///   token per character.
/// - Stop words are those of all the page's languages together (`StopWords.words(for:)`), so an English phrase in a
///   Chinese page loses its "the" too.
/// - A token of one `Character` is dropped, a single Han character included: alone it is too ambiguous to find a
///   page by.
/// - Duplicates are found case-insensitively (and with ’ read as '); the first spelling is kept, so "License" at the
///   start of a sentence stays capitalized, and German nouns keep their capital.
public enum Keywords {
    /// The keywords of `text`, read in `languages` (Tesseract codes, as in `PageOptions.languages`). Opens a word
    /// breaker for the call; a page slot keeps one in a `PageAnalyzer` instead.
    public static func extract(from text: String, languages: [String]) -> [String] {
        guard let breaker = try? WordBreaker() else { return [] }
        return extract(from: breaker.tokens(in: text), languages: languages)
    }

    /// The keywords among tokens already made (one segmentation can serve both keywords and `PageLanguage`).
    public static func extract(from tokens: [WordToken], languages: [String]) -> [String] {
        let stopWords = StopWords.words(for: languages)
        var seen: Set<String> = []
        var keywords: [String] = []
        for token in tokens where token.kind.isWord && token.text.count > 1 {
            let key = comparisonKey(token.text)
            // A "word" of digits and marks only (ICU calls 3rd a word) says nothing alone.
            guard token.text.contains(where: \.isLetter), !stopWords.contains(key), seen.insert(key).inserted else { continue }
            keywords.append(token.text)
        }
        return keywords
    }

    /// Lowercase, with the typographic apostrophe made straight (the stop lists use ').
    static func comparisonKey(_ word: String) -> String {
        let lowered = word.lowercased()
        return lowered.contains("’") ? lowered.replacing("’", with: "'") : lowered
    }
}
