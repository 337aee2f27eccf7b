import Testing
import FarmCore
import FarmRender
import TestSupport

/// The renderers write bytes in place (render on demand, issue 19): what they write for real pages' models is held
/// to the renderings the worker made of the same readings before, byte for byte (Fixtures/render).
@Suite("Renderings of real pages, byte for byte")
struct RenderingIdentityTests {
    /// The page models and renderings in Fixtures/render, made by `ocrfarm run --lang chi_sim+eng --candidates 2
    /// --outputs hocr,alto,page,json` at 1857560 (renderings built as Strings): a Chinese page, a clean page, a phone
    /// photo (rectified: boxes are quadrilaterals) and a scan turned a quarter (rotation in every format).
    static let pages = ["cjk", "clean", "photo", "turned"]

    static func fixture(_ name: String) throws -> [UInt8] {
        let output = try Run.process("/bin/gzip", ["-dc", Fixtures.path("render/" + name + ".gz")])
        guard output.status == 0 else { throw FixtureError(message: "gzip -dc \(name): \(output.stderr)") }
        return Array(output.stdout)
    }

    /// PAGE's creation times left out: the worker's clock when it rendered (the model keeps it to the millisecond).
    static func comparable(_ bytes: [UInt8], _ format: OutputFormat) -> [Substring] {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        return format == .page ? lines.filter { !$0.contains("<Created>") && !$0.contains("<LastChange>") } : lines
    }

    @Test("hOCR, ALTO, PAGE and the page JSON of four real pages' models are the bytes rendered at OCR time",
          arguments: RenderingIdentityTests.pages)
    func sameBytes(_ name: String) throws {
        let text = String(decoding: try Self.fixture(name + ".txt"), as: UTF8.self)
        let json = try Self.fixture(name + ".model.json")
        let model = try #require(PageModel(bytes: json, text: text))
        // Read without a tree, the model is the one its tree reads.
        #expect(PageModel(json: try JSON.parse(json), text: text) == model)
        let rendered = PageArtifacts.render(model, outputs: PageArtifacts.renderedOnDemand)
        #expect(rendered.map(\.0) == PageArtifacts.renderedOnDemand)
        for (format, bytes) in rendered {
            let expected = Self.comparable(try Self.fixture(name + "." + format.fileExtension), format)
            let lines = Self.comparable(bytes, format)
            #expect(lines.count == expected.count, "\(name) \(format): \(lines.count) lines, expected \(expected.count)")
            if let first = lines.indices.first(where: { $0 < expected.count && lines[$0] != expected[$0] }) {
                Issue.record("\(name) \(format) differs at line \(first + 1):\n\(lines[first])\nexpected:\n\(expected[first])")
            }
        }
    }

    @Test("the page JSON written in place is the JSON tree's rendering; the String renderers give the same bytes")
    func pageJSON() throws {
        let text = String(decoding: try Self.fixture("photo.txt"), as: UTF8.self)
        let model = try #require(PageModel(json: try JSON.parse(try Self.fixture("photo.model.json")), text: text))
        let context = model.context
        let rendered = Dictionary(uniqueKeysWithValues: PageArtifacts.render(model, outputs: PageArtifacts.renderedOnDemand))
        #expect(rendered[.json] == PageArtifacts.json(source: context.source, page: context.page, result: model.result).bytes)
        let page = ExportPage(result: model.result, imageName: context.source, number: 1,
                              languages: PageArtifacts.described(context.languages, model.result))
        let creator = DocumentCreator(version: context.creator)
        #expect(rendered[.hocr] == Array((HOCR.header(system: creator.software) + HOCR.page(page) + HOCR.footer).utf8))
        #expect(rendered[.alto] == Array((ALTO.header(imageName: context.source, software: "ocrfarm", version: creator.version)
                                           + ALTO.page(page) + ALTO.footer).utf8))
        #expect(rendered[.page] == Array(PAGEXML.document(page, creator: creator.software, created: context.created).utf8))
    }

    @Test("XML and JSON escape in place as they did: markup, control and non-characters, line separators")
    func escaping() {
        let text = "a<b>&\"c'\u{1}\t\n\r\u{FFFE}\u{FFFF}\u{FFFD}é漢\u{2028}\u{2029}\u{1F600}\\"
        #expect(XML.escaped(text) == "a&lt;b&gt;&amp;&quot;c&apos;\t\n\r\u{FFFD}é漢\u{2028}\u{2029}\u{1F600}\\")
        #expect(JSON.string(text).rendered
                == #""a<b>&\"c'\u0001\t\n\r\#u{FFFE}\#u{FFFF}\#u{FFFD}é漢\u2028\u2029\#u{1F600}\\""#)
        #expect(JSON.array([.int(-12), .int(0), .double(-0.5), .double(3), .double(1e300)]).rendered == "[-12,0,-0.5,3,1e+300]")
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
