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

    /// Whether `word` is not empty and begins and ends with ASCII characters that are not white space: `trimmed`
    /// leaves it as it is, and it is spaced from any word beside it (`isSpaced`).
    public static func hasTrimmedASCIIEnds(_ word: String) -> Bool {
        let utf8 = word.utf8
        guard let first = utf8.first, let last = utf8.last else { return false }
        return first < 0x80 && last < 0x80 && !isASCIIWhitespace(first) && !isASCIIWhitespace(last)
    }

    /// A word without the white space the engine sometimes leaves at its ends (" ——"): lines and their documents put
    /// one space between words, so a word's own would double it.
    public static func trimmed(_ word: String) -> String {
        // ASCII ends (nearly every word) are read from the UTF-8 bytes: an ASCII byte is a whole scalar and no
        // white-space scalar joins a following ASCII one in a grapheme cluster (only CR LF, both white space).
        let utf8 = word.utf8
        guard let firstByte = utf8.first, let lastByte = utf8.last else { return word }
        if firstByte < 0x80 && lastByte < 0x80 {
            if !isASCIIWhitespace(firstByte) && !isASCIIWhitespace(lastByte) { return word }
            if utf8.allSatisfy({ $0 < 0x80 }) {
                guard let start = utf8.firstIndex(where: { !isASCIIWhitespace($0) }),
                    let end = utf8.lastIndex(where: { !isASCIIWhitespace($0) })
                else { return "" }
                return String(word[start...end])
            }
        }
        return characterTrimmed(word)
    }

    /// `trimmed` by Characters (Unicode white space: NBSP, ideographic space, ...): the reference for the fast path.
    static func characterTrimmed(_ word: String) -> String {
        guard word.first?.isWhitespace == true || word.last?.isWhitespace == true else { return word }
        return String(word.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    /// The ASCII scalars with Unicode's White_Space property (tab, line feed, vertical tab, form feed, carriage
    /// return, space): what `Character.isWhitespace` says of an ASCII character.
    @inline(__always) static func isASCIIWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

    /// Whether a space goes between two neighbouring words of a line (`join`'s rule): every renderer spaces a line
    /// the same way as its text.
    public static func isSpaced(_ left: String, _ right: String) -> Bool {
        guard let lastByte = left.utf8.last, let firstByte = right.utf8.first else { return false }
        // An ASCII byte at either side: that character is not unspaced text (a grapheme cluster ending in an ASCII
        // scalar starts with it or with a Prepend scalar, neither of them unspaced).
        if lastByte < 0x80 || firstByte < 0x80 { return true }
        return characterSpaced(left, right)
    }

    /// `isSpaced` by Characters: the reference for the fast path.
    static func characterSpaced(_ left: String, _ right: String) -> Bool {
        guard let last = left.last, let first = right.first else { return false }
        return !(isUnspaced(last) && isUnspaced(first))
    }
}
