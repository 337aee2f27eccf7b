import Testing
import FarmAnalysis

@Suite("Page language")
struct PageLanguageTests {
    @Test("the script with the most words picks the first page language written in it")
    func dominantScript() {
        let chinese = "我们的图书馆有很多历史档案。 The archive is open."
        #expect(PageLanguage.detect(text: chinese, languages: ["chi_sim", "eng"]) == "chi_sim")
        #expect(PageLanguage.detect(text: chinese, languages: ["eng", "chi_tra", "chi_sim"]) == "chi_tra")
        let english = "The archive of the library is open every day. 图书馆"
        #expect(PageLanguage.detect(text: english, languages: ["chi_sim", "eng"]) == "eng")
        #expect(PageLanguage.detect(text: english, languages: ["chi_sim", "deu", "eng"]) == "deu")
        #expect(PageLanguage.detect(text: "Привет, мир, как дела", languages: ["eng", "rus"]) == "rus")
    }

    @Test("a Chinese page with long English lines is Chinese: words are counted, not letters")
    func wordsNotLetters() {
        let text = "上善若水。水善利万物而不争，处众人之所恶，故几于道。 Redistribution and use in source and binary forms"
        #expect(PageLanguage.detect(text: text, languages: ["chi_sim", "eng"]) == "chi_sim")
    }

    @Test("kana makes a Han-script page Japanese when Japanese is among the languages")
    func japanese() {
        let text = "私は図書館で歴史の本を読みました。"
        #expect(PageLanguage.detect(text: text, languages: ["chi_sim", "jpn"]) == "jpn")
        #expect(PageLanguage.detect(text: "图书馆有很多历史档案", languages: ["chi_sim", "jpn"]) == "chi_sim")
    }

    @Test("nil without letters, or without a page language of the text's script")
    func none() {
        #expect(PageLanguage.detect(text: "", languages: ["eng"]) == nil)
        #expect(PageLanguage.detect(text: "12 345, 6.7 — !", languages: ["eng"]) == nil)
        #expect(PageLanguage.detect(text: "图书馆", languages: ["eng"]) == nil)
        #expect(PageLanguage.detect(text: "图书馆 and more", languages: ["eng"]) == "eng")
    }

    @Test("the analyzer gives both from one segmentation, the same as the two functions")
    func analyzer() throws {
        let analyzer = try PageAnalyzer()
        let text = "我们的图书馆有很多历史档案。 The archive is open."
        let result = analyzer.analyze(text, languages: ["chi_sim", "eng"])
        #expect(result.language == PageLanguage.detect(text: text, languages: ["chi_sim", "eng"]))
        #expect(result.keywords == Keywords.extract(from: text, languages: ["chi_sim", "eng"]))
        #expect(analyzer.analyze("", languages: ["eng"]).language == nil)
    }
}
