import Testing
import FarmCore

@Suite("PageResult")
struct PageResultTests {
    func page() -> PageResult {
        let word = Word(text: "图书馆", box: Rect(x: 10, y: 20, width: 90, height: 30), confidence: 91.5, language: "chi_sim")
        let line = Line(box: word.box, words: [word])
        var page = PageResult(width: 200, height: 100, resolution: 300, text: "图书馆", meanConfidence: 91.5,
                              blocks: [Block(box: word.box, kind: "text", paragraphs: [Paragraph(box: word.box, lines: [line])])])
        page.language = "chi_sim"
        page.keywords = ["图书", "历史", "License"]
        return page
    }

    @Test("the stored structure keeps the page's language and keywords, and reads them back")
    func storedStructure() throws {
        let stored = try JSON.parse(page().structureJSON.rendered)
        #expect(stored["language"]?.stringValue == "chi_sim")
        let read = try #require(PageResult(json: stored))
        #expect(read.language == "chi_sim")
        #expect(read.keywords == ["图书", "历史", "License"])
        #expect(read.words.first?.language == "chi_sim")
    }

    @Test("the page JSON has language and keywords; an unanalyzed page has null and an empty list")
    func pageJSON() throws {
        let json = try JSON.parse(page().json.rendered)
        #expect(json["language"]?.stringValue == "chi_sim")
        #expect(json["keywords"]?.arrayValue?.compactMap { $0.stringValue } == ["图书", "历史", "License"])
        let empty = PageResult.empty(width: 1, height: 1, resolution: 300)
        #expect(empty.json["language"] == .null)
        #expect(empty.json["keywords"] == .array([]))
        let read = try #require(PageResult(json: empty.structureJSON))
        #expect(read.language == nil && read.keywords.isEmpty)
    }
}
