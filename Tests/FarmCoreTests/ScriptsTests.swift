import Testing
@testable import FarmCore

@Suite("Scripts")
struct ScriptsTests {
    /// ASCII, CJK, combining marks, NBSP, ideographic space, CR LF, a Prepend scalar, white space only, empty.
    static let words = [
        "", " ", " \t\n", "word", " word", "word ", "  two words\t", "\r\nword\r\n", "é", "e\u{301}", " \u{301}x", "x \u{301}",
        "\u{301}", "\u{A0}word\u{A0}", "word\u{A0}", "\u{A0}", "\u{3000}世界\u{3000}", "世界", " 世界 ", "世界 ", "日本語。",
        "「引用」", "\u{FF01}", "\u{201C}", "\u{0600}a", "a\u{0600}", "\u{2003}em\u{2003}", "\u{85}nel", "tab\u{B}", "\u{1C}x\u{1F}",
        "ｗｉｄｅ", "Ωmega ", " ——", "—— ", "한국어", "a世", "世a", "\u{1F600}", " \u{1F600} ",
    ]

    @Test("trimmed's byte fast path gives what trimming by Characters gives")
    func trimmedMatchesCharacters() {
        for word in Self.words {
            #expect(Scripts.trimmed(word) == Scripts.characterTrimmed(word), "\(word.unicodeScalars.map { $0.value })")
        }
    }

    @Test("isSpaced's byte fast path gives what comparing Characters gives")
    func isSpacedMatchesCharacters() {
        for left in Self.words {
            for right in Self.words {
                #expect(Scripts.isSpaced(left, right) == Scripts.characterSpaced(left, right), "\(left) | \(right)")
            }
        }
        #expect(!Scripts.isSpaced("世界", "日本"))
        #expect(Scripts.isSpaced("世界", "a"))
    }
}
