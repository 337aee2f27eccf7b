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

    @Test("removing words drops the lines, paragraphs and blocks left empty; removing lines drops the paragraphs and blocks")
    func removing() {
        func word(_ text: String, x: Int) -> Word {
            Word(text: text, box: Rect(x: x, y: 0, width: 10, height: 10), confidence: 90, language: "eng")
        }
        func line(_ words: Word...) -> Line { Line(box: words[0].box, words: words) }
        func block(_ lines: Line...) -> Block {
            Block(box: lines[0].box, kind: "text", paragraphs: [Paragraph(box: lines[0].box, lines: lines)])
        }
        let page = PageResult(width: 100, height: 100, resolution: 300, text: "", meanConfidence: 90,
                              blocks: [block(line(word("a", x: 0), word("--", x: 20)), line(word("--", x: 0))),
                                       block(line(word("----", x: 0)))])
        var words = page
        words.removeWords { $0.text.hasPrefix("-") }
        #expect(words.blocks.count == 1 && words.blocks[0].paragraphs[0].lines.count == 1)
        #expect(words.words.map(\.text) == ["a"])
        var lines = page
        lines.removeLines { $0.words.allSatisfy { $0.text.hasPrefix("-") } }
        #expect(lines.blocks.count == 1)
        #expect(lines.words.map(\.text) == ["a", "--"])
        var none = page
        none.removeWords { _ in true }
        #expect(none.blocks.isEmpty)
    }
}
