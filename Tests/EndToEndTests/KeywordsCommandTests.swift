import Testing
import FarmAnalysis
import FarmCore
import TestSupport

/// The page language and keywords in `ocrfarm ocr --format json`, with the real engine on the sample pages.
@Suite("ocrfarm ocr: page language and keywords (end to end)")
struct KeywordsCommandTests {
    func page(_ name: String, languages: String) throws -> JSON {
        let output = try Run.ocrfarm(["ocr", Fixtures.packageRoot + "/Samples/pages/" + name, "--format", "json",
                                      "--lang", languages])
        #expect(output.status == 0, "\(output.stderr)")
        return try #require(try JSON.parse(Array(output.stdout))["pages"]?[0])
    }

    @Test("a Chinese page with English lines: chi_sim, multi-character Chinese keywords, no stop word, no single character")
    func chinesePage() throws {
        let page = try page("cjk-000.png", languages: "chi_sim+eng")
        #expect(page["language"]?.stringValue == "chi_sim")
        let keywords = try #require(page["keywords"]?.arrayValue?.compactMap { $0.stringValue })
        let chinese = keywords.filter { $0.unicodeScalars.contains(where: Scripts.isHan) }
        #expect(chinese.count >= 12 && keywords.count <= Keywords.limit, "\(keywords)")
        // The words the page says most: the sages of chapter 3 of the Daodejing, the disciple of the Analects.
        for expected in ["圣人", "无为", "子贡"] {
            #expect(chinese.contains(expected), "\(expected) missing from \(chinese)")
        }
        let stopWords = StopWords.words(for: ["chi_sim", "eng"])
        #expect(keywords.filter { stopWords.contains($0.lowercased()) }.isEmpty, "\(keywords)")
        #expect(keywords.filter { $0.count < 2 }.isEmpty, "\(keywords)")
        #expect(Set(keywords.map { $0.lowercased() }).count == keywords.count, "duplicates in \(keywords)")
        // The English lines give keywords too, without their function words.
        #expect(keywords.contains("software") && keywords.contains("distributed"), "\(keywords)")
    }

    @Test("an English page: eng, at most 20 keywords, the most said first, without the, of or one-letter words")
    func englishPage() throws {
        let page = try page("clean-000.png", languages: "eng")
        #expect(page["language"]?.stringValue == "eng")
        let keywords = try #require(page["keywords"]?.arrayValue?.compactMap { $0.stringValue })
        #expect(keywords.count > 10 && keywords.count <= Keywords.limit, "\(keywords)")
        let lowered = keywords.map { $0.lowercased() }
        for stop in ["the", "of", "and", "to", "a", "is"] { #expect(!lowered.contains(stop), "\(stop) in \(keywords)") }
        #expect(keywords.allSatisfy { $0.count > 1 && $0.contains(where: \.isLetter) }, "\(keywords)")
        #expect(Set(lowered).count == keywords.count, "duplicates in \(keywords)")
        // A licence page: copyright is what it says most, and it names its software and its licence.
        #expect(lowered.first == "copyright" && lowered.contains("software") && lowered.contains("license"), "\(keywords)")
    }

    @Test("the none engine reads no text: no language, no keywords, no analyze stage")
    func noneEngine() throws {
        let output = try Run.ocrfarm(["ocr", Fixtures.packageRoot + "/Samples/pages/clean-001.png", "--format", "json",
                                      "--engine", "none"])
        #expect(output.status == 0, "\(output.stderr)")
        let page = try #require(try JSON.parse(Array(output.stdout))["pages"]?[0])
        #expect(page["language"] == .null)
        #expect(page["keywords"] == .array([]))
        #expect(page["timings_ms"]?["analyze"] == nil)
    }
}
