import Testing
import FarmCore
import FarmRender

@Suite("One-page documents of a result")
struct PageArtifactsTests {
    let result: PageResult = {
        let word = Word(text: "Tom", box: Rect(x: 10, y: 10, width: 60, height: 20), confidence: 90)
        let line = Line(box: word.box, words: [word])
        return PageResult(width: 200, height: 100, resolution: 300, text: "Tom\n", meanConfidence: 90, blocks: [
            Block(box: line.box, kind: "text", paragraphs: [Paragraph(box: line.box, lines: [line])]),
        ])
    }()
    let creator = DocumentCreator(engine: "tesseract 5.3.0")

    @Test("each output asked for, in the order asked; the PDF only when given; the text is no rendering")
    func orderAndPresence() {
        let pdf = Array("%PDF-1.4 page".utf8)
        let outputs: [OutputFormat] = [.json, .text, .pdf, .page, .alto, .hocr]
        let rendered = PageArtifacts.render(result, pdf: pdf, outputs: outputs, source: "scan.png", pageNumber: 3,
                                            languages: ["eng"], created: 0, creator: creator)
        #expect(rendered.map(\.0) == [.json, .pdf, .page, .alto, .hocr])
        #expect(rendered.first { $0.0 == .pdf }?.1 == pdf)
        let text = { (format: OutputFormat) in String(decoding: rendered.first { $0.0 == format }?.1 ?? [], as: UTF8.self) }
        #expect(text(.hocr).contains(">Tom</span>") && text(.hocr).contains(creator.software))
        #expect(text(.alto).contains("CONTENT=\"Tom\"") && text(.alto).contains(creator.version))
        #expect(text(.page).contains("<Unicode>Tom</Unicode>"))
        let withoutPDF = PageArtifacts.render(result, pdf: nil, outputs: [.pdf, .json], source: "scan.png", pageNumber: 1,
                                              languages: ["eng"], created: 0, creator: creator)
        #expect(withoutPDF.map(\.0) == [.json])
    }

    @Test("the page JSON gives its shape's version, its source and page first, then the result; a failure its code, stage and reason")
    func json() {
        let document = PageArtifacts.json(source: "scan.png", page: 3, result: result)
        guard case .object(let fields) = document else { Issue.record("not an object"); return }
        #expect(fields.prefix(3).map(\.0) == ["version", "source", "page"])
        #expect(document["version"]?.intValue == PageArtifacts.jsonVersion)
        #expect(document["page"]?.intValue == 3 && document["text"]?.stringValue == "Tom\n")
        let failure = PageArtifacts.json(source: "bad.png", page: 1,
                                         failure: PageFailure(stage: "decode", code: .decodeFailed, message: "not an image"))
        #expect(failure.rendered == #"{"version":1,"source":"bad.png","page":1,"error":{"code":"decode-failed","stage":"decode","message":"not an image"}}"#)
    }

    @Test("documents declare the languages given, or with --lang auto the one the page was found to be in")
    func languages() {
        var found = result
        found.language = "deu"
        #expect(PageArtifacts.described(["chi_sim", "eng"], found) == ["chi_sim", "eng"])
        #expect(PageArtifacts.described([PageOptions.automaticLanguage], found) == ["deu"])
        #expect(PageArtifacts.described([PageOptions.automaticLanguage], result) == ["eng"])
    }

    @Test("one spelling per format: raw values are what is stored and shown; txt is taken for the text too")
    func formats() {
        #expect(OutputFormat.storable.map(\.rawValue) == ["pdf", "hocr", "alto", "page", "json"])
        #expect(OutputFormat.exported.map(\.exportName) == ["pdf", "text", "hocr", "alto", "page", "json"])
        #expect(OutputFormat(exportName: "txt") == .text && OutputFormat(exportName: "text") == .text)
        #expect(OutputFormat(exportName: "docx") == nil)
        #expect(OutputFormat.allCases.filter(\.needsPageImage) == [.pdf])
        var options = PageOptions(outputs: [.hocr, .json])
        #expect(PageOptions(json: options.json).outputs == [.hocr, .json])
        options.outputs = []
        #expect(PageOptions(json: options.json).outputs == [])
        #expect(PageOptions(json: .object([("outputs", .array(["json", "text", "pdf"]))])).outputs == [.pdf, .json])
    }
}
