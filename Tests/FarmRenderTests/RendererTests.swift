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

    /// A Chinese line of three words on a page turned a quarter clockwise (as `page(turned:)`), read at 150 dpi from
    /// a 300 dpi scan downscaled by half; its paragraph and block keep a larger box, as a split paragraph would.
    func chinese() -> ExportPage {
        func word(_ text: String, _ x: Int) -> Word { Word(text: text, box: Rect(x: x, y: 100, width: 40, height: 30), confidence: 90) }
        let line = Line(box: Rect(x: 90, y: 90, width: 300, height: 60), words: [word("道德", 100), word("经", 150), word("GPL", 200)])
        var result = PageResult(width: 1000, height: 800, resolution: 150, text: "道德经 GPL\n", meanConfidence: 90, blocks: [
            Block(box: Rect(x: 0, y: 0, width: 900, height: 700), kind: "text",
                  paragraphs: [Paragraph(box: Rect(x: 0, y: 0, width: 900, height: 700), lines: [line])]),
        ])
        // corrected (x, y) → original (2y, 2000 − 2x): turned, and twice as large.
        result.toOriginal = Homography([0, 2, 0, -2, 0, 2000, 0, 0, 1])
        result.originalWidth = 1600
        result.originalHeight = 2000
        return ExportPage(result: result, imageName: "scan.png", number: 1, languages: ["chi_sim"])
    }

    @Test("a turned page's text carries its angle: hOCR textangle, ALTO ROTATION, PAGE orientation")
    func rotation() {
        let turned = chinese()
        #expect(turned.textAngle == 90, "lines run up the scan: 90° counterclockwise")
        let hocr = HOCR.page(turned)
        #expect(hocr.contains("; textangle 90'>"), "\(hocr)")
        #expect(ALTO.page(turned).contains("HEIGHT=\"2000\" ROTATION=\"90\">"))
        #expect(ALTO.page(turned).contains("ROTATION=\"90\" LANG=\"chi\""))
        let xml = PAGEXML.document(turned, creator: "test", created: 0)
        #expect(xml.contains("imageHeight=\"2000\" orientation=\"90\">") && xml.contains("region_1_1\" orientation=\"90\""))
        // An upright page says nothing.
        let flat = page(turned: false)
        #expect(flat.textAngle == 0 && !HOCR.page(flat).contains("textangle") && !ALTO.page(flat).contains("ROTATION")
                && !PAGEXML.document(flat, creator: "t", created: 0).contains("orientation"))
        #expect(page(turned: true).textAngle == 90 && page(turned: true).textAngle(of: Rect(x: 100, y: 100, width: 210, height: 30)) == 90)
    }

    @Test("scan_res is the original's resolution: the recognized image's carried back through the map, or the file's own")
    func scanResolution() {
        let turned = chinese()
        #expect(turned.originalResolution == 300)
        #expect(HOCR.page(turned).contains("bbox 0 0 1600 2000; ppageno 0; scan_res 300 300'"))
        var declared = turned.result
        declared.findings = .object([("decode", .object([("resolution", JSON(200))]))])
        #expect(ExportPage(result: declared, imageName: "x", number: 1).originalResolution == 200)
    }

    @Test("every box holds its children: a line is the union of its words, a paragraph of its lines, a block of its paragraphs")
    func enclosing() {
        let page = chinese()
        let line = page.result.lines[0]
        #expect(line.box == Rect(x: 100, y: 100, width: 140, height: 30))
        #expect(page.result.blocks[0].paragraphs[0].box == line.box && page.result.blocks[0].box == line.box)
        let hocr = HOCR.page(page)
        // In the scan: x 2y… , y 2000 − 2x…: the words' union, not the engine's larger boxes.
        #expect(hocr.contains("class='ocr_carea' id='block_1_1' title='bbox 200 1520 260 1800;"), "\(hocr)")
        #expect(hocr.contains("class='ocr_line' id='line_1_1' title='bbox 200 1520 260 1800;"))
        let xml = PAGEXML.document(page, creator: "t", created: 0)
        #expect(xml.contains("<Coords points=\"200,1800 200,1520 260,1520 260,1800\"/>"), "\(xml)")
    }

    @Test("Chinese is spaced as its text in every format: no space between Chinese words, one before a Latin word")
    func unspaced() {
        let page = chinese()
        #expect(page.result.lines[0].text == "道德经 GPL")
        let hocr = HOCR.page(page)
        #expect(hocr.contains(">道德</span><span class='ocrx_word'") && hocr.contains(">经</span> <span class='ocrx_word'"), "\(hocr)")
        let alto = ALTO.page(page)
        #expect(alto.split(separator: "<SP ", omittingEmptySubsequences: false).count == 2, "one SP, before GPL: \(alto)")
        #expect(PAGEXML.document(page, creator: "t", created: 0).contains("<TextEquiv><Unicode>道德经 GPL</Unicode></TextEquiv>\n      </TextLine>"))
    }

    @Test("an exported rendering names the page image by the path given; other formats are left as they are")
    func pointed() {
        let page = page(turned: false)
        let hocr = Array((HOCR.header(system: "t") + HOCR.page(page) + HOCR.footer).utf8)
        let alto = Array((ALTO.header(imageName: "scan 1.png", software: "t", version: "1") + ALTO.page(page) + ALTO.footer).utf8)
        let xml = Array(PAGEXML.document(page, creator: "t", created: 0).utf8)
        func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
        #expect(text(PageArtifacts.pointed(hocr, .hocr, at: "../scans/a'1.png")).contains("title='image \"../scans/a&apos;1.png\"; bbox"))
        #expect(text(PageArtifacts.pointed(alto, .alto, at: "../a.png")).contains("<fileName>../a.png</fileName>"))
        #expect(text(PageArtifacts.pointed(xml, .page, at: "../a.png")).contains("<Page imageFilename=\"../a.png\" imageWidth"))
        #expect(PageArtifacts.pointed(Array("{}".utf8), .json, at: "x") == Array("{}".utf8))
        for pointed in [PageArtifacts.pointed(hocr, .hocr, at: "a&b"), PageArtifacts.pointed(xml, .page, at: "<x>")] {
            #expect(XML.isWellFormed(pointed))
        }
    }

    @Test("white space the engine left at a word's ends is not doubled into the line; a word of white space is left out")
    func whiteSpaceWords() {
        func word(_ text: String, _ x: Int) -> Word { Word(text: text, box: Rect(x: x, y: 10, width: 20, height: 10), confidence: 80) }
        let line = Line(box: Rect(x: 0, y: 10, width: 100, height: 10), words: [word("Corre", 0), word(" ——", 30), word(" ", 60), word("Pies", 80)])
        #expect(line.text == "Corre —— Pies")
        let blank = Line(box: Rect(x: 0, y: 40, width: 100, height: 10), words: [word(" ", 0)])
        let result = PageResult(width: 200, height: 100, resolution: 300, text: "Corre —— Pies\n", meanConfidence: 80, blocks: [
            Block(box: line.box, kind: "text", paragraphs: [Paragraph(box: line.box, lines: [line, blank])]),
        ])
        let page = ExportPage(result: result, imageName: "x.png", number: 1)
        #expect(page.result.words.map(\.text) == ["Corre", "——", "Pies"])
        #expect(page.result.lines.count == 1, "a line of white space is left out (an ALTO TextLine needs a String)")
        #expect(PAGEXML.document(page, creator: "t", created: 0).contains("<Unicode>Corre —— Pies</Unicode>"))
        #expect(!ALTO.page(page).contains("CONTENT=\" "))
    }
}
