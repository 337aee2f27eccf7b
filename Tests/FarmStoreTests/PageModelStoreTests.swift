import Testing
import FarmCore
@testable import FarmStore
import SQLite
import TestSupport

@Suite("Store: page models")
struct PageModelStoreTests {
    let folder = TemporaryDirectory("model-test")

    @Test("a result's model is kept compressed, read back whole, and its blocks put back into the structure")
    func keptAndReadBack() throws {
        let store = try Store(path: folder.file("farm.db"))
        let pages = [NewPage(source: RawPath("/data/a.png"), index: 0, kind: .image)]
        let document = try store.add([NewDocument(name: "a", source: RawPath("/data/a.png"), contentHash: "a", priority: 0,
                                                  options: PageOptions(), pages: pages)])[0]
        let page = try #require(try store.pages(of: [document]).first?.id)
        let worker = WorkerID("w1")
        try store.write { try store.workerJoined(worker, host: "h", pid: 1, slots: 1, engine: "t", languages: ["eng"], version: "t", now: 0) }
        let attempt = try #require(try store.write { try store.lease(page, to: worker, now: 1, expires: 100) })
        let words = (0..<400).map { Word(text: "word\($0)", box: Rect(x: $0, y: 5, width: 20, height: 10), confidence: 90 + Double($0) / 7) }
        var result = PageResult(width: 1000, height: 100, resolution: 300, text: "words", meanConfidence: 91,
                                blocks: [Block(box: Rect(x: 0, y: 0, width: 1000, height: 100), kind: "text",
                                               paragraphs: [Paragraph(box: Rect(x: 0, y: 0, width: 1000, height: 100),
                                                                      lines: [Line(box: Rect(x: 0, y: 0, width: 1000, height: 100), words: words)])])])
        result.keywords = ["word"]
        let model = PageModel(result: result, context: RenderContext(source: "a.png", page: 1, languages: ["eng"], created: 5,
                                                                     creator: "test"))
        let json = model.json.bytes
        let output = PageOutput(engine: "t", text: "words", meanConfidence: 91, width: 1000, height: 100,
                                structure: result.summaryJSON.bytes, timings: "{}",
                                artifacts: [("hocr", Array("<html/>".utf8)), (Store.modelName, json)])
        #expect(try store.write { try store.complete(attempt, by: worker, output: output, startedAt: 1, now: 2) })
        #expect(try store.model(of: page) == model)
        #expect(try store.hasModel(page))
        // Kept compressed, not among the renderings; the frozen rendering is.
        let stored = try #require(try store.connection.prepare("SELECT length(model) FROM results").first { $0.int(0) })
        #expect(stored < json.count / 3, "\(stored) of \(json.count) bytes")
        #expect(try store.artifacts(of: page).keys.sorted() == ["hocr"])
        // The structure's readers see the blocks, rounded as the structure writes them.
        #expect(try store.structure(of: page) == (try JSON.parse(result.structureJSON.bytes)))
    }

    @Test("a damaged model is an error naming it, never a larger buffer")
    func damaged() throws {
        let packed = Store.packed(Array(repeating: UInt8(ascii: "a"), count: 10_000))
        #expect(try Store.unpacked(packed).count == 10_000)
        var truncated = packed
        truncated.removeLast(4)
        #expect(throws: StoreError.self) { try Store.unpacked(truncated) }
        var lying = packed
        (lying[0], lying[1]) = (0x10, 0)  // says 16 bytes, of a stream that gives 10,000
        #expect(throws: StoreError.self) { try Store.unpacked(lying) }
        #expect(throws: StoreError.self) { try Store.unpacked([0xFF, 0xFF, 0xFF, 0x7F, 1, 2, 3]) }
    }

    @Test("a model of a few hundred bytes is kept in stored blocks, a larger one deflated; both read back")
    func smallModelsStored() throws {
        // An empty page's model (the null engine, a blank page): deflating it would cost more than it saves.
        let small = Array(#"{"model":1,"render":{"source":"0000/0000000.png","page":1,"languages":["eng"]},"blocks":[]}"#.utf8)
        let packed = Store.packed(small)
        // 4 bytes of length, the zlib header (2), one stored block's header (5), the bytes as they are, Adler-32 (4).
        #expect(packed.count == 4 + 2 + 5 + small.count + 4)
        #expect(Array(packed[11..<(11 + small.count)]) == small)
        #expect(try Store.unpacked(packed) == small)
        let large = Array(repeating: small, count: 40).flatMap { $0 }
        #expect(large.count >= Store.smallestDeflatedModel)
        let deflated = Store.packed(large)
        #expect(deflated.count < large.count / 4)
        #expect(try Store.unpacked(deflated) == large)
    }
}
