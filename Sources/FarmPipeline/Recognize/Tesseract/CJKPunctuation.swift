import FarmCore

/// Punctuation in Chinese text is full width (，。：；？！（）“”), but Tesseract's models read it as ASCII:
/// the installed chi_sim model cannot even produce ？！：；（）. These rules restore the full-width forms from
/// context, character for character, and leave English alone.
public enum CJKPunctuation {
    static let fullWidth: [Character: Character] = [",": "，", ".": "。", ":": "：", ";": "；", "?": "？", "!": "！",
                                                    "(": "（", ")": "）"]
    static let fullWidthMarks: Set<Character> = ["，", "。", "：", "；", "？", "！", "（", "）", "“", "”", "、", "《", "》"]
    static let backToASCII: [Character: Character] = ["，": ",", "；": ";", "：": ":", "？": "?", "！": "!"]

    /// Applies the rules to one line given as words; returns words of the same count.
    public static func normalize(_ words: [String]) -> [String] {
        // Work on the characters of the line with single spaces between words, remembering each one's word.
        var characters: [Character] = []
        var owner: [Int] = []
        for (index, word) in words.enumerated() {
            if index > 0 { characters.append(" "); owner.append(-1) }
            for character in word { characters.append(character); owner.append(index) }
        }
        func context(_ c: Character?) -> Bool { c.map { Scripts.isHan($0) || fullWidthMarks.contains($0) } ?? false }
        func isASCIIAlphanumeric(_ c: Character?) -> Bool { c.map { $0.isASCII && ($0.isLetter || $0.isNumber) } ?? false }
        func neighbor(_ i: Int, step: Int) -> Character? {
            var j = i + step
            while j >= 0 && j < characters.count && characters[j] == " " { j += step }
            return j >= 0 && j < characters.count ? characters[j] : nil
        }
        // ASCII punctuation in Chinese context becomes full width.
        for i in characters.indices {
            guard let wide = fullWidth[characters[i]] else { continue }
            let previous = neighbor(i, step: -1), next = neighbor(i, step: 1)
            if characters[i] == "." && isASCIIAlphanumeric(previous) { continue }  // English periods, decimals
            if context(previous) || (next.map(Scripts.isHan) == true && !isASCIIAlphanumeric(previous)) {
                characters[i] = wide
            }
        }
        // Full-width punctuation between English words goes back to ASCII.
        for i in characters.indices {
            guard let narrow = backToASCII[characters[i]] else { continue }
            let before = i > 0 ? characters[i - 1] : nil
            let after = neighbor(i, step: 1)
            if let before, before.isASCII && (before.isLetter || before.isNumber || before == "."),
               let after, after.isASCII && after.isLetter {
                characters[i] = narrow
            }
        }
        // Straight double quotes next to Chinese become curly, alternating open and close.
        var lastQuote: Character = "”"
        for i in characters.indices where characters[i] == "\"" || characters[i] == "“" || characters[i] == "”" {
            if characters[i] == "\"" {
                let before = i > 0 ? characters[i - 1] : nil
                guard context(before) || neighbor(i, step: 1).map(Scripts.isHan) == true else { continue }
                characters[i] = lastQuote == "“" ? "”" : "“"
            }
            lastQuote = characters[i]
        }
        var result = words.map { _ in "" }
        for (character, index) in zip(characters, owner) where index >= 0 { result[index].append(character) }
        return result
    }
}
