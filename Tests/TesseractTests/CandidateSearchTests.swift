import Testing
@testable import Tesseract

@Suite("Word candidates from symbol choices")
struct CandidateSearchTests {
    @Test("the product of symbol probabilities ranks whole-word readings, best first")
    func ranking() {
        let symbols = [[Choice(text: "c", confidence: 90), Choice(text: "e", confidence: 10)],
                       [Choice(text: "a", confidence: 60), Choice(text: "o", confidence: 40)],
                       [Choice(text: "t", confidence: 100)]]
        let words = CandidateSearch.wordCandidates(symbols, limit: 3)
        #expect(words.map(\.text) == ["cat", "cot", "eat"])
        #expect(abs(words[0].confidence - 54) < 0.1)
        #expect(abs(words[1].confidence - 36) < 0.1)
        #expect(abs(words[2].confidence - 6) < 0.1)
    }

    @Test("duplicates collapse and the limit holds")
    func duplicates() {
        let symbols = [[Choice(text: "a", confidence: 50), Choice(text: "a", confidence: 40)], [Choice(text: "b", confidence: 90)]]
        let words = CandidateSearch.wordCandidates(symbols, limit: 5)
        #expect(words.map(\.text) == ["ab"])
        #expect(CandidateSearch.wordCandidates(symbols, limit: 0).isEmpty)
    }
}
