import Testing
import FarmCore

@Suite("PageModel")
struct PageModelTests {
    func model() -> PageModel {
        let word = Word(text: "Beispiel", box: Rect(x: 10, y: 20, width: 90, height: 30), confidence: 92.49963,
                        candidates: [Candidate(text: "Beispiel", confidence: 92.49963), Candidate(text: "Beisplel", confidence: 3.1)],
                        language: "deu", fromDictionary: true)
        let line = Line(box: word.box, words: [word])
        var result = PageResult(width: 200, height: 100, resolution: 300, text: "Beispiel", meanConfidence: 92.49963,
                                blocks: [Block(box: word.box, kind: "table", paragraphs: [Paragraph(box: word.box, lines: [line])])],
                                timings: [StageTiming(stage: "decode", milliseconds: 1.23456), StageTiming(stage: "recognize", milliseconds: 40)])
        result.language = "deu"
        result.keywords = ["Beispiel"]
        result.findings = .object([("deskew", .object([("angle", 0.35)]))])
        result.toOriginal = Homography([1.0000001, 0.0123456789012, 3.5, -0.0123, 0.99999, 7.25, 1.2e-7, -3.4e-8, 1])
        result.originalWidth = 2480
        result.originalHeight = 3508
        return PageModel(result: result, context: RenderContext(source: "scan.tif page 3", page: 3, languages: ["deu", "eng"],
                                                                created: 1_790_000_000.123, creator: "0.9.0 (tesseract 5.3.0)"))
    }

    @Test("a model reads back exactly: unrounded confidences, the map to the original, findings, what its documents name")
    func roundTrip() throws {
        let model = model()
        let read = try #require(PageModel(json: try JSON.parse(model.json.bytes), text: "Beispiel"))
        #expect(read == model)
        // Read without the tree (render on demand), the same model.
        #expect(PageModel(bytes: model.json.bytes, text: "Beispiel") == model)
        // A confidence rounded to hundredths (the structure's 92.5) would round to 93 in hOCR; the model keeps 92.49963.
        #expect(read.result.words.first?.confidence == 92.49963)
    }

    @Test("a model with a broken box, map or context does not read back")
    func broken() throws {
        var json = model().json
        guard case .object(var fields) = json else { Issue.record("not an object"); return }
        let good = fields
        for (key, bad) in [("to_original", JSON.array([1, 2, 3])), ("render", .object([("source", "x")])),
                           ("blocks", .array([.object([("box", "no")])])), ("model", 99), ("original_size", .array(["a", 1]))] {
            fields = good
            fields.removeAll { $0.0 == key }
            fields.append((key, bad))
            json = .object(fields)
            #expect(PageModel(json: try JSON.parse(json.bytes), text: "") == nil, "\(key)")
            #expect(PageModel(bytes: json.bytes, text: "") == nil, "\(key)")
        }
        // Not JSON, or more than one value.
        #expect(PageModel(bytes: Array(model().json.bytes.dropLast()), text: "") == nil)
        #expect(PageModel(bytes: model().json.bytes + Array(" {}".utf8), text: "") == nil)
    }
}
