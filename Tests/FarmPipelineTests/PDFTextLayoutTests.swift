import FarmCore
@testable import FarmPipeline
import Testing

@Suite("A PDF page's own text with its word boxes (pdftotext -bbox-layout)")
struct PDFTextLayoutTests {
    /// Poppler 22's `-bbox-layout` shape: two flows (columns), the first of two blocks.
    static let xhtml = """
        <doc>
          <page width="612.000000" height="792.000000">
            <flow>
              <block xMin="72.000000" yMin="90.5" xMax="200.2" yMax="104.9">
                <line xMin="72.000000" yMin="90.5" xMax="200.2" yMax="104.9">
                  <word xMin="72.000000" yMin="90.5" xMax="120.0" yMax="104.9">Smith &amp; Sons</word>
                  <word xMin="124.0" yMin="90.5" xMax="200.2" yMax="104.9">&lt;Ltd&gt;</word>
                </line>
              </block>
              <block xMin="72.0" yMin="120.0" xMax="150.0" yMax="134.0">
                <line xMin="72.0" yMin="120.0" xMax="150.0" yMax="134.0">
                  <word xMin="72.0" yMin="120.0" xMax="150.0" yMax="134.0">ledger</word>
                </line>
              </block>
            </flow>
            <flow>
              <block xMin="320.0" yMin="90.0" xMax="700.0" yMax="104.0">
                <line xMin="320.0" yMin="90.0" xMax="700.0" yMax="104.0">
                  <word xMin="320.0" yMin="90.0" xMax="700.0" yMax="104.0">右栏</word>
                  <word xMin="nan" yMin="90.0" xMax="330.0" yMax="104.0">lost</word>
                  <word xMin="330.0" yMin="90.0" xMax="340.0" yMax="104.0">  </word>
                </line>
              </block>
            </flow>
          </page>
        </doc>
        """

    @Test("flows become blocks, poppler's blocks paragraphs; boxes rounded outwards and clipped to the page")
    func structure() {
        let blocks = PDFTextLayout.blocks(Self.xhtml, width: 612, height: 792)
        #expect(blocks.count == 2)
        #expect(blocks.first?.paragraphs.count == 2)
        let words = blocks.flatMap(\.paragraphs).flatMap(\.lines).flatMap(\.words)
        #expect(words.map(\.text) == ["Smith & Sons", "<Ltd>", "ledger", "右栏"])
        #expect(words.first?.box == Rect(x: 72, y: 90, width: 48, height: 15))
        #expect(words.last?.box == Rect(x: 320, y: 90, width: 292, height: 14), "clipped at the page's right edge")
        #expect(blocks.first?.paragraphs.first?.lines.first?.box == Rect(x: 72, y: 90, width: 129, height: 15))
        #expect(blocks.first?.box == Rect(x: 72, y: 90, width: 129, height: 44))
        #expect(words.allSatisfy { $0.confidence == 100 })
        let page = PageResult(width: 612, height: 792, resolution: 72, text: "", meanConfidence: 100, blocks: blocks)
        #expect(TesseractRecognizer.text(of: page) == "Smith & Sons <Ltd>\n\nledger\n\n右栏\n")
    }

    @Test("no words, or not poppler's shape at all: no blocks, no crash")
    func empty() {
        #expect(PDFTextLayout.blocks("", width: 612, height: 792).isEmpty)
        #expect(PDFTextLayout.blocks("<doc><page><flow><block><line></line></block></flow></page></doc>", width: 612, height: 792).isEmpty)
        #expect(PDFTextLayout.blocks("<word xMin=\"1\" yMin=\"1\" xMax=\"5\" yMax=\"5\">a", width: 10, height: 10).count == 1)
        #expect(PDFTextLayout.blocks("<<<>>><word <word", width: 10, height: 10).isEmpty)
    }
}
