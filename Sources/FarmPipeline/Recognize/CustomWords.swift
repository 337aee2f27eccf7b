import FarmCore

/// Custom words (names, terms, codes no dictionary knows): a recognized word that differs from one only in
/// characters an OCR engine confuses (O and 0, l, I and 1, rn and m, case, ...) is read as the custom word.
///
/// Tesseract's LSTM engine gives user word lists little weight (a word such as "CC0" is still read "CCO" with
/// it), so the list is applied to the result: each word's letters are reduced to a skeleton in which confusable
/// characters are one, and a word whose skeleton is a custom word's (and not another's) becomes that word, with
/// the punctuation around it kept.
public struct CustomWords: Sendable {
    private var bySkeleton: [String: String] = [:]

    /// Words shorter than this are left alone: too many real words share a short skeleton.
    static let minimumLength = 3

    public init(_ words: [String]) {
        var ambiguous: Set<String> = []
        for word in words where word.count >= Self.minimumLength {
            let key = Self.skeleton(word)
            if let existing = bySkeleton[key], existing != word { ambiguous.insert(key) }
            bySkeleton[key] = word
        }
        for key in ambiguous { bySkeleton.removeValue(forKey: key) }
    }

    /// The custom word a recognized word stands for, with its leading and trailing punctuation; nil when none.
    public func correction(of word: String) -> String? {
        let characters = Array(word)
        guard let first = characters.firstIndex(where: Self.isWordCharacter),
              let last = characters.lastIndex(where: Self.isWordCharacter) else { return nil }
        let core = String(characters[first...last])
        guard let custom = bySkeleton[Self.skeleton(core)], custom != core else { return nil }
        return String(characters[..<first]) + custom + String(characters[(last + 1)...])
    }

    /// The result with every word that stands for a custom word replaced; `changed` says whether any was.
    public func correcting(_ result: PageResult) -> (result: PageResult, changed: Bool) {
        var result = result
        var changed = false
        result.updateLines { line in
            for w in line.words.indices {
                if let corrected = correction(of: line.words[w].text) {
                    line.words[w].text = corrected
                    changed = true
                }
            }
        }
        return (result, changed)
    }

    static func isWordCharacter(_ character: Character) -> Bool { character.isLetter || character.isNumber }

    /// Lower case, with characters engines confuse made one.
    static func skeleton(_ word: String) -> String {
        var text = word.lowercased()
        for (pair, single) in [("rn", "m"), ("cl", "d"), ("vv", "w")] {
            text = text.replacing(pair, with: single)
        }
        return String(text.map { character -> Character in
            switch character {
            case "0", "o", "q", "ø": "o"
            case "1", "i", "l", "|", "!", "í", "ì": "l"
            case "5", "s", "$": "s"
            case "8", "b": "b"
            case "2", "z": "z"
            case "6", "g": "g"
            case "u", "v": "u"
            default: character
            }
        })
    }
}
