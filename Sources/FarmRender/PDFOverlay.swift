import FarmCore

/// The invisible text layer laid over a page of a PDF that came in as a PDF (like OCRmyPDF's: the page keeps its
/// own content, and the text goes on top). This writes the layer's content stream and its font; QPDF adds them to
/// the page (`QPDF.addingText`), which is where the page's boxes and /Rotate are known.
///
/// The content draws in the pixels of the page's rendering (the image that was read), y up: each word is placed on
/// the quadrilateral it has in that image (`PageResult.originalQuad`), so a page the stages turned or deskewed
/// gets its text where the words are on the page, along their baselines.
public enum PDFOverlay {
    /// The font's resource name on the page: unlikely to clash with a name the page uses already.
    public static let fontName = "OCRFarmGlyphLess"
    /// The index of the font itself in `fontObjects`.
    public static let fontObject = 5

    /// An object of the layer's font: a dictionary whose references to the other objects are `@n` (their index).
    public struct FontObject: Sendable {
        public let dictionary: String
        public let stream: [UInt8]?
    }

    /// The glyphless font (Tesseract's `pdf.ttf`, one empty glyph) as a Type 0 font with ToUnicode; the last
    /// object (`fontObject`) is the font to name in the resources, each object after those it refers to.
    public static func fontObjects(program: [UInt8]) -> [FontObject] {
        let width = SearchablePDF.glyphWidth
        // Every 2-byte code shows glyph 1 (the font's one empty glyph).
        var map = [UInt8](repeating: 0, count: 2 << 16)
        for i in stride(from: 1, to: map.count, by: 2) { map[i] = 1 }
        return [
            FontObject(dictionary: "<< >>", stream: map),
            FontObject(dictionary: "<< >>", stream: Array(SearchablePDF.toUnicodeCMap.utf8)),
            FontObject(dictionary: "<< /Length1 \(program.count) >>", stream: program),
            // Ascent 1000: a glyph box is exactly the font size tall, so the word's box is its glyphs' box.
            FontObject(dictionary: "<< /Type /FontDescriptor /FontName /GlyphLessFont /Flags 5 /FontBBox [0 0 \(width) 1000] "
                       + "/ItalicAngle 0 /Ascent 1000 /Descent -1 /CapHeight 1000 /StemV 80 /FontFile2 @2 >>", stream: nil),
            FontObject(dictionary: "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /GlyphLessFont "
                       + "/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> "
                       + "/FontDescriptor @3 /CIDToGIDMap @0 /DW \(width) >>", stream: nil),
            FontObject(dictionary: "<< /Type /Font /Subtype /Type0 /BaseFont /GlyphLessFont /Encoding /Identity-H "
                       + "/DescendantFonts [@4] /ToUnicode @1 >>", stream: nil),
        ]
    }

    /// The text layer of `result` in a space of `width` × `height` (the pixels of the page's rendering), y up.
    public static func content(_ result: PageResult, width: Int, height: Int) -> [UInt8] {
        let number = { (value: Double) in SearchablePDF.number(value) }
        let pageHeight = Double(height)
        func flipped(_ point: Point) -> Point { Point(point.x, pageHeight - point.y) }
        var out = "BT\n3 Tr\n"
        for line in result.lines {
            let words = line.words.filter { !Scripts.trimmed($0.text).isEmpty && $0.box.width > 0 && $0.box.height > 0 }
            for (index, word) in words.enumerated() {
                let quad = result.originalQuad(of: word.box)
                let (topLeft, bottomRight, bottomLeft) = (flipped(quad.corners[0]), flipped(quad.corners[2]), flipped(quad.corners[3]))
                let along = (x: bottomRight.x - bottomLeft.x, y: bottomRight.y - bottomLeft.y)
                let length = (along.x * along.x + along.y * along.y).squareRoot()
                let size = ((topLeft.x - bottomLeft.x) * (topLeft.x - bottomLeft.x)
                            + (topLeft.y - bottomLeft.y) * (topLeft.y - bottomLeft.y)).squareRoot()
                guard length > 0, size > 0 else { continue }
                let (cos, sin) = (along.x / length, along.y / length)
                let text = Scripts.trimmed(word.text)
                let units = Array(text.utf16)
                let advance = Double(SearchablePDF.glyphWidth) / 1000 * size
                out += "/\(fontName) \(number(size)) Tf "
                out += "\(number(cos)) \(number(sin)) \(number(-sin)) \(number(cos)) \(number(bottomLeft.x)) \(number(bottomLeft.y)) Tm "
                out += "\(number(100 * length / (Double(units.count) * advance))) Tz <\(units.map(SearchablePDF.hex).joined())> Tj"
                // A space in the gap to the next word, so extractors that go by characters find the word break.
                if index + 1 < words.count, let last = text.last, let first = Scripts.trimmed(words[index + 1].text).first,
                   !(Scripts.isUnspaced(last) && Scripts.isUnspaced(first))
                {
                    let next = flipped(result.originalQuad(of: words[index + 1].box).corners[3])
                    let gap = max(0.01, (next.x - bottomRight.x) * cos + (next.y - bottomRight.y) * sin)
                    out += " \(number(max(0.001, 100 * gap / advance))) Tz <0020> Tj"
                }
                out += "\n"
            }
        }
        return Array((out + "ET").utf8)
    }
}
