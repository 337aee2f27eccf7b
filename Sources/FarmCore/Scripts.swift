/// Facts about writing systems that recognition and analysis need.
public enum Scripts {
    /// Tesseract language codes of Chinese and Japanese, whose text has no spaces between words.
    static let unspacedLanguages: Set<String> = ["chi_sim", "chi_tra", "chi_sim_vert", "chi_tra_vert", "jpn", "jpn_vert"]

    public static func isUnspacedLanguage(_ code: String) -> Bool { unspacedLanguages.contains(code) }

    /// Han ideographs (CJK unified, extension A, compatibility).
    public static func isHan(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return (0x4E00...0x9FFF).contains(v) || (0x3400...0x4DBF).contains(v) || (0xF900...0xFAFF).contains(v)
            || (0x20000...0x2FA1F).contains(v)
    }

    /// Kana, CJK punctuation and full-width forms: characters that sit in unspaced text.
    public static func isUnspaced(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return isHan(scalar) || (0x3000...0x30FF).contains(v) || (0xFF00...0xFFEF).contains(v) || v == 0x201C || v == 0x201D
    }

    public static func isUnspaced(_ character: Character) -> Bool { character.unicodeScalars.first.map(isUnspaced) ?? false }
    public static func isHan(_ character: Character) -> Bool { character.unicodeScalars.first.map(isHan) ?? false }

    /// Joins the words of a line: a space between two words unless the characters on both sides of it belong to
    /// unspaced text (Chinese, Japanese), where Tesseract's spaces are artifacts.
    public static func join(_ words: [String]) -> String {
        var line = ""
        for word in words where !word.isEmpty {
            if !line.isEmpty, isSpaced(line, word) { line.append(" ") }
            line += word
        }
        return line
    }

    /// A word without the white space the engine sometimes leaves at its ends (" ——"): lines and their documents put
    /// one space between words, so a word's own would double it.
    public static func trimmed(_ word: String) -> String {
        guard word.first?.isWhitespace == true || word.last?.isWhitespace == true else { return word }
        return String(word.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    /// Whether a space goes between two neighbouring words of a line (`join`'s rule): every renderer spaces a line
    /// the same way as its text.
    public static func isSpaced(_ left: String, _ right: String) -> Bool {
        guard let last = left.last, let first = right.first else { return false }
        return !(isUnspaced(last) && isUnspaced(first))
    }
}
