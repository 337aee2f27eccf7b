import Testing
import FarmCore
import FarmRender

@Suite("A page's renderings: stored, else rendered from its model")
struct PageRenderingsTests {
    let model: PageModel = {
        let word = Word(text: "Tom", box: Rect(x: 10, y: 10, width: 60, height: 20), confidence: 90)
        let line = Line(box: word.box, words: [word])
        let result = PageResult(width: 200, height: 100, resolution: 300, text: "Tom\n", meanConfidence: 90, blocks: [
            Block(box: line.box, kind: "text", paragraphs: [Paragraph(box: line.box, lines: [line])]),
        ])
        return PageModel(result: result, context: RenderContext(source: "scan.png", page: 2, languages: ["eng"],
                                                                created: 1_790_000_000, creator: "0.9.0 (tesseract 5.3.0)"))
    }()

    @Test("only formats rendered on demand that the page has not stored come from its model, in the order asked")
    func fromModel() {
        let all: [OutputFormat] = [.pdf, .json, .text, .page, .alto, .hocr]
        #expect(PageRenderings(all, stored: []).fromModel == [.json, .page, .alto, .hocr])
        #expect(PageRenderings(all, stored: ["hocr", "pdf", "json"]).fromModel == [.page, .alto])
        #expect(PageRenderings([.pdf, .text], stored: []).fromModel.isEmpty)
    }

    @Test("what is rendered is what the worker renders from the same model")
    func rendered() {
        let renderings = PageRenderings([.hocr, .alto, .pdf], stored: ["alto"])
        let made = renderings.rendered(from: model)
        #expect(Set(made.keys) == [.hocr])
        #expect(made[.hocr] == PageArtifacts.render(model, outputs: [.hocr]).first?.1)
        #expect(PageRenderings([.pdf], stored: []).rendered(from: model).isEmpty)
    }

    @Test("a rendering made from the model is taken; else the stored one, read only then; else none")
    func rendering() throws {
        let renderings = PageRenderings([.hocr, .alto], stored: ["alto"])
        let made = renderings.rendered(from: model)
        var reads = 0
        let stored = { () -> [UInt8]? in
            reads += 1
            return Array("stored".utf8)
        }
        #expect(PageRenderings.rendering(.hocr, rendered: made, stored: stored) == made[.hocr])
        #expect(reads == 0)
        #expect(PageRenderings.rendering(.alto, rendered: made, stored: stored) == Array("stored".utf8))
        #expect(reads == 1)
        #expect(PageRenderings.rendering(.page, rendered: made, stored: { nil }) == nil)
    }
}
