import Testing
import ICU

@Suite("ICU word breaker")
struct WordBreakerTests {
    let breaker: WordBreaker

    init() throws { breaker = try WordBreaker() }

    @Test("English: words, numbers and punctuation with their kinds; no whitespace tokens")
    func english() {
        let tokens = breaker.tokens(in: "The 3 quick-brown foxes don't jump, 12.5 times!")
        #expect(tokens.map(\.text) == ["The", "3", "quick", "-", "brown", "foxes", "don't", "jump", ",", "12.5", "times", "!"])
        #expect(tokens.map(\.kind) == [.letter, .number, .letter, .none, .letter, .letter, .letter, .letter, .none, .number,
                                       .letter, .none])
    }

    @Test("Chinese comes out as multi-character dictionary words, each ideographic")
    func chinese() {
        let tokens = breaker.tokens(in: "我们的图书馆有很多历史档案。")
        let words = tokens.filter { $0.kind == .ideographic }.map(\.text)
        // ICU 72's dictionary splits 图书馆 as 图书 + 馆 (and 博物馆 as 博物 + 馆); the other words are whole.
        for expected in ["我们", "图书", "很多", "历史", "档案"] {
            #expect(words.contains(expected), "\(expected) missing from \(words)")
        }
        #expect(words.joined() == "我们的图书馆有很多历史档案")
        #expect(tokens.last == WordToken(text: "。", kind: .none))
    }

    @Test("Japanese kana, Cyrillic and mixed text; the breaker is reusable and keeps no text between calls")
    func scriptsAndReuse() {
        // ICU's dictionary handles kana too and reports its words as ideographic; either way they are words.
        #expect(breaker.tokens(in: "ひらがなカタカナ").allSatisfy { $0.kind.isWord })
        #expect(breaker.words(in: "私は図書館で").contains("図書館"))
        #expect(breaker.words(in: "Привет, мир") == ["Привет", "мир"])
        #expect(breaker.words(in: "OCR 农场 farm") == ["OCR", "农场", "farm"])
        #expect(breaker.tokens(in: "").isEmpty)
        #expect(breaker.tokens(in: " \n\t ").isEmpty)
        // Characters outside the Basic Multilingual Plane (surrogate pairs in UTF-16) stay whole.
        #expect(breaker.tokens(in: "a 𠀀𠀁 b").map(\.text).joined() == "a𠀀𠀁b")
    }

    @Test("ICU reports its version")
    func version() {
        let parts = ICULibrary.version.split(separator: ".")
        #expect(parts.count >= 2 && parts.allSatisfy { Int($0) != nil }, "\(ICULibrary.version)")
    }
}
