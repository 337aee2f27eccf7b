import Testing
import FarmCore
@testable import FarmRender

@Suite("hOCR, ALTO and PAGE from the result model")
struct RendererTests {
    /// Two paragraphs on a 1000 × 800 corrected page that was turned a quarter clockwise from an 800 × 1000 scan.
    func page(turned: Bool) -> ExportPage {
        func word(_ text: String, _ x: Int, _ y: Int) -> Word { Word(text: text, box: Rect(x: x, y: y, width: 100, height: 30), confidence: 91.5) }
        let first = Line(box: Rect(x: 100, y: 100, width: 210, height: 30), words: [word("Tom", 100, 100), word("&", 210, 100)])
        let second = Line(box: Rect(x: 100, y: 300, width: 100, height: 30), words: [word("<Jerry>", 100, 300)])
        var result = PageResult(width: 1000, height: 800, resolution: 300, text: "Tom &\n\n<Jerry>\n", meanConfidence: 91.5, blocks: [
            Block(box: Rect(x: 100, y: 100, width: 210, height: 30), kind: "text",
                  paragraphs: [Paragraph(box: first.box, lines: [first])]),
            Block(box: second.box, kind: "text", paragraphs: [Paragraph(box: second.box, lines: [second])]),
        ])
        if turned {
            // corrected (x, y) → original (y, 1000 − x): the scan lay on its side.
            result.toOriginal = Homography([0, 1, 0, -1, 0, 1000, 0, 0, 1])
            result.originalWidth = 800
            result.originalHeight = 1000
        }
        return ExportPage(result: result, imageName: "scan 1.png", number: 1)
    }

    @Test("boxes are mapped into the original image; quadrilaterals are given where the page was turned")
    func mapping() {
        let turned = page(turned: true)
        #expect(turned.imageWidth == 800 && turned.imageHeight == 1000)
        // The word "Tom" at x 100…200, y 100…130 on the page lies at x 100…130, y 800…900 in the scan.
        #expect(turned.bounds(Rect(x: 100, y: 100, width: 100, height: 30)) == Rect(x: 100, y: 800, width: 30, height: 100))
        #expect(turned.isWarped)
        #expect(!page(turned: false).isWarped)
        let hocr = HOCR.page(turned)
        #expect(hocr.contains("title='bbox 100 800 130 900; poly 100 900 100 800 130 800 130 900; x_wconf 92'>Tom</span>"), "\(hocr)")
        #expect(hocr.contains("&amp;") && hocr.contains("&lt;Jerry&gt;"))
        #expect(hocr.contains("image \"scan 1.png\"; bbox 0 0 800 1000"))
    }

    @Test("the renderings are well-formed XML by the check the coordinator applies to what workers send")
    func wellFormed() {
        for turned in [false, true] {
            let page = page(turned: turned)
            let hocr = HOCR.header(system: "ocrfarm test") + HOCR.page(page) + HOCR.footer
            let alto = ALTO.header(imageName: "scan 1.png", software: "ocrfarm", version: "test") + ALTO.page(page) + ALTO.footer
            let pageXML = PAGEXML.document(page, creator: "ocrfarm test", created: 1_800_000_000)
            for (name, text) in [("hocr", hocr), ("alto", alto), ("page", pageXML)] {
                #expect(XML.isWellFormed(Array(text.utf8)), "\(name): \(text)")
                // Cut short, it is not.
                #expect(!XML.isWellFormed(Array(text.utf8.dropLast(20))), "\(name) cut short")
            }
        }
    }

    @Test("ALTO: positions, word confidence, spaces, and polygons only where needed")
    func alto() {
        let flat = ALTO.page(page(turned: false))
        #expect(flat.contains("<String ID=\"string_1_1\" HPOS=\"100\" VPOS=\"100\" WIDTH=\"100\" HEIGHT=\"30\" WC=\"0.915\" CONTENT=\"Tom\"/>"), "\(flat)")
        #expect(flat.contains("<SP WIDTH=\"10\" HPOS=\"200\" VPOS=\"100\"/>"))
        #expect(!flat.contains("Polygon"))
        #expect(ALTO.page(page(turned: true)).contains("<Polygon POINTS=\"100,900 100,800 130,800 130,900\"/>"))
    }

    @Test("PAGE: reading order, a polygon and text at every level")
    func pageXML() {
        let xml = PAGEXML.document(page(turned: true), creator: "test", created: 0)
        #expect(xml.contains("<RegionRefIndexed index=\"0\" regionRef=\"region_1_1\"/>"))
        #expect(xml.contains("<RegionRefIndexed index=\"1\" regionRef=\"region_1_2\"/>"))
        #expect(xml.contains("<Coords points=\"100,900 100,800 130,800 130,900\"/>"), "\(xml)")
        #expect(xml.contains("<TextEquiv conf=\"0.915\"><Unicode>Tom</Unicode></TextEquiv>"))
        #expect(xml.contains("<TextEquiv><Unicode>Tom &amp;</Unicode></TextEquiv>"))
        #expect(xml.contains("<Created>1970-01-01T00:00:00"))
        #expect(xml.contains("imageWidth=\"800\" imageHeight=\"1000\""))
    }
}
