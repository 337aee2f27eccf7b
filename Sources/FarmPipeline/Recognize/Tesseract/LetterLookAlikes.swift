import FarmCore

/// Marks the English model reads in place of letters it knows less well, put back where only the letter can stand.
/// The English model reads a page when the user names no other language, and Portuguese, Spanish, Italian and
/// French pages come to it so (eurotext: "salta sobre 0 cão pregui¢oso.", where the page says "o" and "ç").
///
/// A lone "0" standing between words, no taller than their lower-case letters, is the letter "o" (a word in
/// Portuguese, Italian and Spanish). The box tells the two apart, not the text the engine guessed: lining figures,
/// the digits of nearly all print, stand as tall as capitals, while "o" stands at the x-height, about two thirds of
/// the ascender height in the common faces (Times, Helvetica, Computer Modern: 0.66–0.72; eurotext: 17 pixels
/// against 23). A "0" lower than `lowercaseShare` of the line's ascender height, halfway between the two, is read
/// as "o". Only between words of letters: a "0" beside a number, a sign or a formula ("= 0", "0 0 1", "x 0") is a
/// digit whatever its height (old-style figures stand at the x-height too, and so do subscripts). A line with no
/// word to measure the ascender height on is left as read.
///
/// A cent sign between two letters is "ç", whose cedilla hangs below the "c" as the sign's stroke does: a price's
/// "¢" follows a digit, never a letter inside a word. Left in, it also cuts the word in two for a search.
enum LetterLookAlikes {
    /// A "0" lower than this share of its line's ascender height stands at the x-height.
    static let lowercaseShare = 0.85
    /// Letters that rise above the x-height (capitals and accented letters count too).
    static let ascenders: Set<Character> = ["b", "d", "f", "h", "k", "l", "t", "ß"]
    /// Letters and marks that hang below the baseline and so make a word's box taller than its ascender height.
    static let descenders: Set<Character> = ["g", "j", "p", "q", "y", "ç", ",", ";"]

    /// `result` with each lone "0" at the x-height between words of letters read as "o" and each "¢" between letters
    /// as "ç", and how many words that changed.
    static func corrected(_ result: PageResult) -> (result: PageResult, changed: Int) {
        var result = result
        var changed = 0
        result.updateLines { line in
            let words = line.words
            for w in words.indices {
                guard let text = withCedillas(words[w].text) else { continue }
                line.words[w].text = text
                changed += 1
            }
            guard words.contains(where: { $0.text == "0" }), let ascent = ascenderHeight(of: words) else { return }
            for w in words.indices where standsAsLetter(w, in: words, ascent: ascent) {
                line.words[w].text = "o"
                changed += 1
            }
        }
        return (result, changed)
    }

    /// Whether word `index` of a line is a "0" at the x-height between words of letters.
    static func standsAsLetter(_ index: Int, in words: [Word], ascent: Int) -> Bool {
        guard words[index].text == "0" else { return false }
        let neighbours = [index - 1, index + 1].filter(words.indices.contains).map { words[$0] }
        guard !neighbours.isEmpty, neighbours.allSatisfy({ isLetterWord($0.text) }) else { return false }
        return Double(words[index].box.height) < lowercaseShare * Double(ascent)
    }

    /// The median box height of the line's words that rise to the ascender and hang below nothing; nil when it has
    /// none.
    static func ascenderHeight(of words: [Word]) -> Int? {
        let heights = words.filter { word in
            isLetterWord(word.text) && !word.text.contains(where: descenders.contains)
                && word.text.contains { ascenders.contains($0) || $0.isUppercase || isAccented($0) }
        }.map(\.box.height).sorted()
        return heights.isEmpty ? nil : heights[heights.count / 2]
    }

    /// Whether `text` is a word of letters, perhaps with punctuation after it ("sobre", "cão.", "it's").
    static func isLetterWord(_ text: String) -> Bool {
        var body = Substring(text)
        while let last = body.last, ".,;:!?)]”\"'".contains(last) { body.removeLast() }
        return !body.isEmpty && body.allSatisfy { $0.isLetter || $0 == "'" || $0 == "’" || $0 == "-" }
    }

    /// Whether `character` is a lower-case letter with a mark above it (é, ã, ô), as tall as an ascender.
    static func isAccented(_ character: Character) -> Bool {
        character.isLowercase && !character.isASCII && character != "ı"
    }

    /// `text` with each "¢" between two letters read as "ç"; nil when it has none.
    static func withCedillas(_ text: String) -> String? {
        let characters = Array(text)
        guard characters.contains("¢") else { return nil }
        var changed = false
        var result = characters
        for i in characters.indices.dropFirst().dropLast()
        where characters[i] == "¢" && characters[i - 1].isLetter && characters[i + 1].isLetter {
            result[i] = "ç"
            changed = true
        }
        return changed ? String(result) : nil
    }
}
