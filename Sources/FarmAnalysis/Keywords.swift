import ICU

/// A page's keywords: the words and names worth finding the page by, ranked, at most `limit` of them.
///
/// - Words come from ICU's word breaker, so Chinese and Japanese give dictionary words (图书馆, 历史), not one
///   token per character.
/// - Dropped: stop words of all the page's languages together (`StopWords.words(for:)`, so an English phrase in a
///   Chinese page loses its "the" too), numbers alone, tokens of one character (a single Han character included:
///   alone it is too ambiguous), and tokens that look like OCR debris rather than words of a language: a digit
///   between letters (`l0ve`), a letter three times running (`eee`), case that flips inside a word (`DitFerONnal`),
///   two lower-case letters (`ee`), and, when the reader's confidences are given, words never read with
///   confidence `minimumConfidence`.
/// - Named things are kept whole: runs of two to four capitalised words inside a sentence (`Boost Software
///   License`), dates (`1998-03-12`, `12.03.1998`, `12 March 1998`) and numbers with a unit (`25 kg`, `300 dpi`).
/// - Ranked by how often the page says them (a word among its first `headingWords`, its title or heading, as
///   if once more), names, dates and measures first among equals, then by first appearance. Duplicates are found case-insensitively (’ read as '); the first spelling is kept, so German
///   nouns keep their capital.
public enum Keywords {
    /// The most keywords a page keeps.
    public static let limit = 20
    /// The first words of a page that count as its heading (`Candidate.score`).
    static let headingWords = 12
    /// A word read only below this confidence (Tesseract's 0-100) is not trusted as a keyword.
    public static let minimumConfidence = 60.0

    /// The keywords of `text`, read in `languages` (Tesseract codes, as in `PageOptions.languages`). Opens a word
    /// breaker for the call; a page slot keeps one in a `PageAnalyzer` instead.
    public static func extract(from text: String, languages: [String], confidence: [String: Double]? = nil) -> [String] {
        guard let breaker = try? WordBreaker() else { return [] }
        return extract(from: breaker.tokens(in: text), languages: languages, confidence: confidence)
    }

    /// A candidate keyword while the page is read.
    private struct Candidate {
        let spelling: String
        var count: Int
        /// Its place among the page's words: a word of the page's first lines (its title, its heading) ranks as if
        /// said once more.
        let first: Int
        var score: Int { count + (first < Keywords.headingWords ? 1 : 0) }
        /// A name, a date or a measure: ranks before plain words said as often.
        let named: Bool
    }

    /// The keywords among tokens already made (one segmentation can serve both keywords and `PageLanguage`).
    /// `confidence`: the best confidence each word (lower-cased) was read with, when the reader gave them.
    public static func extract(from tokens: [WordToken], languages: [String], confidence: [String: Double]? = nil) -> [String] {
        let stopWords = StopWords.words(for: languages)
        var candidates: [String: Candidate] = [:]
        var order = 0
        func add(_ spelling: String, named: Bool) {
            let key = comparisonKey(spelling)
            if candidates[key] != nil {
                candidates[key]!.count += 1
            } else {
                candidates[key] = Candidate(spelling: spelling, count: 1, first: order, named: named)
                order += 1
            }
        }
        // Words, and runs of capitalised words inside a sentence.
        var sentenceStart = true
        var run: [String] = []
        var runStartsSentence = false
        func endRun() {
            let names = runStartsSentence ? Array(run.dropFirst()) : run
            if names.count >= 2 && names.count <= 4 { add(names.joined(separator: " "), named: true) }
            run.removeAll()
        }
        for token in tokens {
            if token.kind == .none {
                if token.text.contains(where: { ".!?:;。！？\n".contains($0) }) {
                    endRun()
                    sentenceStart = true
                } else if !token.text.allSatisfy(\.isWhitespace) {
                    endRun()
                }
                continue
            }
            let key = comparisonKey(token.text)
            let capitalised = token.kind == .letter && token.text.first?.isUppercase == true && !stopWords.contains(key)
            if capitalised {
                if run.isEmpty { runStartsSentence = sentenceStart }
                run.append(token.text)
            } else {
                endRun()
            }
            defer { sentenceStart = false }
            guard token.kind.isWord, token.text.count > 1, token.text.contains(where: \.isLetter), !stopWords.contains(key),
                  !looksLikeDebris(token.text) else { continue }
            if let confidence, let read = confidence[key], read < minimumConfidence { continue }
            add(token.text, named: false)
        }
        endRun()
        // Dates and measures, from the text as a whole (the breaker splits them).
        for named in namedThings(in: tokens) { add(named, named: true) }

        return candidates.values.sorted { a, b in
            if a.score != b.score { return a.score > b.score }
            if a.named != b.named { return a.named }
            return a.first < b.first
        }.prefix(limit).map(\.spelling)
    }

    /// Tokens that OCR makes of specks and broken letters rather than words of a language.
    static func looksLikeDebris(_ word: String) -> Bool {
        let characters = Array(word)
        // Two lower-case Latin letters that are no stop word ("ee", "rn"): abbreviations are written in capitals.
        if characters.count == 2, characters.allSatisfy({ $0.isLowercase && $0.isASCII }) { return true }
        var flips = 0
        for index in characters.indices.dropFirst() {
            let (previous, current) = (characters[index - 1], characters[index])
            if current.isNumber, previous.isLetter, index + 1 < characters.count, characters[index + 1].isLetter { return true }
            if index >= 2, current == previous, previous == characters[index - 2], current.isLetter { return true }
            if previous.isLowercase && current.isUppercase { flips += 1 }
            if index >= 2, previous.isUppercase, current.isLowercase, characters[index - 2].isLowercase { flips += 1 }
        }
        return flips >= 2
    }

    static let months: Set<String> = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
        "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    ]
    static let units: Set<String> = [
        "kg", "g", "mg", "t", "km", "m", "cm", "mm", "l", "ml", "dpi", "kb", "mb", "gb", "tb", "kw", "kwh", "mw", "v", "w",
        "hz", "khz", "mhz", "ghz", "%", "€", "$", "£", "eur", "usd", "gbp", "chf", "h", "min", "ha",
    ]

    /// Dates (`1998-03-12`, `12.03.1998`, `12/03/1998`, `12 March 1998`, `March 12, 1998`) and numbers with a unit
    /// (`25 kg`, `12.5 %`), from the tokens.
    static func namedThings(in tokens: [WordToken]) -> [String] {
        let words = tokens.filter { !$0.text.allSatisfy(\.isWhitespace) }.map(\.text)
        var found: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            func at(_ offset: Int) -> String? { index + offset < words.count ? words[index + offset] : nil }
            func isNumber(_ text: String?) -> Bool { text.map { !$0.isEmpty && $0.allSatisfy(\.isNumber) } ?? false }
            // 1998-03-12, 12.03.1998, 12/03/1998: number, separator, number, the same separator, number.
            if isNumber(word), let separator = at(1), ["-", ".", "/"].contains(separator), isNumber(at(2)), at(3) == separator,
               isNumber(at(4)) {
                let parts = [word, at(2)!, at(4)!]
                if parts.contains(where: { $0.count == 4 }) && parts.allSatisfy({ $0.count <= 4 }) {
                    found.append(parts.joined(separator: separator))
                    index += 5
                    continue
                }
            }
            // 12 March 1998, March 12, 1998.
            if isNumber(word), word.count <= 2, let month = at(1), months.contains(month.lowercased()), isNumber(at(2)), at(2)!.count == 4 {
                found.append("\(word) \(month) \(at(2)!)")
                index += 3
                continue
            }
            if months.contains(word.lowercased()), word.first?.isUppercase == true, isNumber(at(1)), at(1)!.count <= 2 {
                if at(2) == ",", isNumber(at(3)), at(3)!.count == 4 {
                    found.append("\(word) \(at(1)!), \(at(3)!)")
                    index += 4
                    continue
                }
            }
            // A number and its unit: 25 kg, 12.5 %, 300 dpi.
            if isNumber(word) {
                var number = word
                var next = 1
                if at(1) == ".", isNumber(at(2)) {
                    number += "." + at(2)!
                    next = 3
                }
                if let unit = at(next), units.contains(unit.lowercased()) {
                    found.append(number + " " + unit)
                    index += next + 1
                    continue
                }
            }
            index += 1
        }
        return found
    }

    /// Lowercase, with the typographic apostrophe made straight (the stop lists use ').
    public static func comparisonKey(_ word: String) -> String {
        let lowered = word.lowercased()
        return lowered.contains("’") ? lowered.replacing("’", with: "'") : lowered
    }
}
