import FarmCore

/// PAGE XML 2019-07-15 (PRImA), rendered from the result model. Every region, line and word has its exact
/// polygon in the original image (four points: a rectangle on the corrected page is a quadrilateral in a photo),
/// text at every level, and the regions' reading order.
public enum PAGEXML {
    public static let namespace = "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"

    /// A whole PAGE document for one page (PAGE has one page per file).
    public static func document(_ page: ExportPage, creator: String, created: Double) -> String {
        String(decoding: bytes(page, creator: creator, created: created), as: UTF8.self)
    }

    /// `document(page, creator:, created:)` as UTF-8.
    public static func bytes(_ page: ExportPage, creator: String, created: Double) -> [UInt8] {
        let n = page.number
        var out = ByteWriter(capacity: 2048 + 300 * page.wordCount)
        header(page, creator: creator, created: created, into: &out)
        let blocks = page.result.blocks.enumerated().filter { $0.element.paragraphs.contains { !$0.lines.isEmpty } }
        readingOrder(blocks.map(\.offset), page: n, into: &out)
        let turned = page.textAngle != 0
        let language = languageName(page.language)
        var line = 0, word = 0
        // The region's text: its lines' text (`Line.text`, written escaped as it is made), a line end between lines.
        var regionText: [UInt8] = []
        for (b, block) in blocks {
            out.add("    <TextRegion id=\"region_")
            out.add(n)
            out.add("_")
            out.add(b + 1)
            out.add("\"")
            orientation(page.textAngle(of: block.box), always: turned, into: &out)
            out.add(" type=\"paragraph\" primaryLanguage=\"")
            out.add(language)
            out.add("\">\n      <Coords points=\"")
            out.add(polygon: page.blockBoxes[b], inner: UInt8(ascii: ","))
            out.add("\"/>\n")
            regionText.removeAll(keepingCapacity: true)
            var firstLine = true
            for paragraph in block.paragraphs {
                for textLine in paragraph.lines {
                    line += 1
                    if !firstLine { regionText.append(0x0A) }
                    firstLine = false
                    write(textLine, number: line, of: page, word: &word, into: &out, regionText: &regionText)
                }
            }
            out.add("      <TextEquiv><Unicode>")
            out.append(regionText)
            out.add("</Unicode></TextEquiv>\n    </TextRegion>\n")
        }
        out.add("  </Page>\n</PcGts>\n")
        return out.bytes()
    }

    /// The XML declaration, `PcGts`, its metadata and the `Page` start tag.
    private static func header(_ page: ExportPage, creator: String, created: Double, into out: inout ByteWriter) {
        let time = Clock.iso8601(created)
        out.add("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<PcGts xmlns=\"")
        out.append(namespace)
        out.add("\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"")
        out.append(namespace)
        out.add(" ")
        out.append(namespace)
        out.add("/pagecontent.xsd\">\n  <Metadata>\n    <Creator>")
        out.add(escaped: creator)
        out.add("</Creator>\n    <Created>")
        out.append(time)
        out.add("</Created>\n    <LastChange>")
        out.append(time)
        out.add("</LastChange>\n  </Metadata>\n  <Page imageFilename=\"")
        out.add(escaped: page.imageName)
        out.add("\" imageWidth=\"")
        out.add(page.imageWidth)
        out.add("\" imageHeight=\"")
        out.add(page.imageHeight)
        out.add("\"")
        orientation(page.textAngle, into: &out)
        out.add(">\n")
    }

    /// The regions' reading order (`blocks`: the indexes of the blocks with lines); nothing when there are none.
    private static func readingOrder(_ blocks: [Int], page n: Int, into out: inout ByteWriter) {
        guard !blocks.isEmpty else { return }
        out.add("    <ReadingOrder>\n      <OrderedGroup id=\"ro_")
        out.add(n)
        out.add("\">\n")
        for (index, b) in blocks.enumerated() {
            out.add("        <RegionRefIndexed index=\"")
            out.add(index)
            out.add("\" regionRef=\"region_")
            out.add(n)
            out.add("_")
            out.add(b + 1)
            out.add("\"/>\n")
        }
        out.add("      </OrderedGroup>\n    </ReadingOrder>\n")
    }

    /// One `TextLine` (the page's `number`th line) with its words (`word`: the words written before it, counted
    /// on); its text also appended to `regionText`.
    private static func write(_ textLine: Line, number line: Int, of page: ExportPage, word: inout Int,
                              into out: inout ByteWriter, regionText: inout [UInt8]) {
        let n = page.number
        out.add("      <TextLine id=\"line_")
        out.add(n)
        out.add("_")
        out.add(line)
        out.add("\">\n        <Coords points=\"")
        out.add(polygon: page.lineBoxes[line - 1], inner: UInt8(ascii: ","))
        out.add("\"/>\n")
        for w in textLine.words {
            word += 1
            out.add("        <Word id=\"word_")
            out.add(n)
            out.add("_")
            out.add(word)
            out.add("\">\n          <Coords points=\"")
            out.add(polygon: page.wordBoxes[word - 1], inner: UInt8(ascii: ","))
            out.add("\"/>\n          <TextEquiv conf=\"")
            ALTO.write(thousandths: w.confidence / 100, into: &out)
            out.add("\"><Unicode>")
            out.add(escaped: w.text)
            out.add("</Unicode></TextEquiv>\n        </Word>\n")
        }
        out.add("        <TextEquiv><Unicode>")
        let textStart = out.count
        // `textLine.text`: the words are trimmed already (`ExportPage`); words with ASCII ends (nearly
        // all) are a space apart, written one by one without making the line.
        if textLine.words.allSatisfy({ Scripts.hasTrimmedASCIIEnds($0.text) }) {
            for (index, w) in textLine.words.enumerated() {
                if index > 0 { out.add(" ") }
                out.add(escaped: w.text)
            }
        } else {
            out.add(escaped: Scripts.join(textLine.words.map(\.text)))
        }
        out.withBytes(from: textStart) { regionText.append(contentsOf: $0) }
        out.add("</Unicode></TextEquiv>\n      </TextLine>\n")
    }

    /// ` orientation="A"`: PAGE's angle is the clockwise turn that sets the text upright, in (-180, 180], which is the
    /// text's counterclockwise angle in the image (OCR-D turns the image by −A counterclockwise). Left out at 0
    /// unless `always` (a region on a turned page states its own angle, since OCR-D reads a missing one as 0).
    static func orientation(_ textAngle: Double, always: Bool = false, into out: inout ByteWriter) {
        guard textAngle != 0 || always else { return }
        out.add(" orientation=\"")
        ALTO.write(number: textAngle > 180 ? textAngle - 360 : textAngle, into: &out)
        out.add("\"")
    }

    /// PAGE names languages in English ("English", "Chinese"), from a fixed list.
    static func languageName(_ code: String) -> StaticString {
        names[code] ?? "English"
    }

    private static let names: [String: StaticString] = [
        "eng": "English", "chi": "Chinese", "deu": "German", "fra": "French", "spa": "Spanish",
        "ita": "Italian", "por": "Portuguese", "nld": "Dutch", "rus": "Russian", "jpn": "Japanese",
        "kor": "Korean", "ara": "Arabic", "heb": "Hebrew", "hin": "Hindi", "pol": "Polish",
        "ces": "Czech", "swe": "Swedish", "dan": "Danish", "fin": "Finnish", "nor": "Norwegian",
        "ell": "Greek", "tur": "Turkish", "ukr": "Ukrainian", "lat": "Latin"]
}
