import FarmCore

/// ALTO v4 (Library of Congress), rendered from the result model in reading order. Positions are pixels of the
/// original image; `Shape/Polygon` gives the exact quadrilateral of blocks, lines and words when the page was
/// warped or turned.
public enum ALTO {
    public static let namespace = "http://www.loc.gov/standards/alto/ns-v4#"

    public static func header(imageName: String, software: String, version: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <alto xmlns="\(namespace)" xmlns:xlink="http://www.w3.org/1999/xlink" \
        xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
        xsi:schemaLocation="\(namespace) http://www.loc.gov/standards/alto/v4/alto-4-4.xsd">
          <Description>
            <MeasurementUnit>pixel</MeasurementUnit>
            <sourceImageInformation>
              <fileName>\(XML.escaped(imageName))</fileName>
            </sourceImageInformation>
            <Processing ID="OCR_0">
              <processingStepDescription>contentGeneration</processingStepDescription>
              <processingSoftware>
                <softwareName>\(XML.escaped(software))</softwareName>
                <softwareVersion>\(XML.escaped(version))</softwareVersion>
              </processingSoftware>
            </Processing>
          </Description>
          <Layout>

        """
    }

    public static let footer = "  </Layout>\n</alto>\n"

    /// One `Page` element.
    public static func page(_ page: ExportPage) -> String {
        var out = ByteWriter(capacity: 1024 + 260 * page.wordCount)
        write(page, into: &out)
        return String(decoding: out.bytes(), as: UTF8.self)
    }

    /// The whole one-page document (`header`, `page`, `footer`) as UTF-8.
    public static func document(_ page: ExportPage, software: String, version: String) -> [UInt8] {
        var out = ByteWriter(capacity: 2048 + 260 * page.wordCount)
        out.append(header(imageName: page.imageName, software: software, version: version))
        write(page, into: &out)
        out.add("  </Layout>\n</alto>\n")
        return out.bytes()
    }

    /// `page(page)`, appended to `out`.
    public static func write(_ page: ExportPage, into out: inout ByteWriter) {
        let n = page.number
        let language = page.language, warped = page.isWarped
        out.add("    <Page ID=\"page_")
        out.add(n)
        out.add("\" PHYSICAL_IMG_NR=\"")
        out.add(n)
        out.add("\" WIDTH=\"")
        out.add(page.imageWidth)
        out.add("\" HEIGHT=\"")
        out.add(page.imageHeight)
        out.add("\"")
        // The page's text direction in the image (degrees counterclockwise); blocks say their own where they differ.
        let pageAngle = page.textAngle
        if pageAngle != 0 {
            out.add(" ROTATION=\"")
            write(number: pageAngle, into: &out)
            out.add("\"")
        }
        out.add(">\n      <PrintSpace HPOS=\"0\" VPOS=\"0\" WIDTH=\"")
        out.add(page.imageWidth)
        out.add("\" HEIGHT=\"")
        out.add(page.imageHeight)
        out.add("\">\n")
        var line = 0, word = 0
        for (b, block) in page.result.blocks.enumerated() {
            guard block.paragraphs.contains(where: { !$0.lines.isEmpty }) else { continue }
            let blockAngle = page.textAngle(of: block.box)
            out.add("        <TextBlock ID=\"block_")
            out.add(n)
            out.add("_")
            out.add(b + 1)
            out.add("\" ")
            position(page.blockBoxes[b].bounds, into: &out)
            if blockAngle != 0 || pageAngle != 0 {
                out.add(" ROTATION=\"")
                write(number: blockAngle, into: &out)
                out.add("\"")
            }
            out.add(" LANG=\"")
            out.append(language)
            out.add("\">\n")
            if warped { shape(page.blockBoxes[b], indent: 10, into: &out) }
            for paragraph in block.paragraphs {
                for textLine in paragraph.lines {
                    line += 1
                    write(textLine, number: line, of: page, warped: warped, word: &word, into: &out)
                }
            }
            out.add("        </TextBlock>\n")
        }
        out.add("      </PrintSpace>\n    </Page>\n")
    }

    /// One `TextLine` (the page's `number`th line) with its words (`word`: the words written before it, counted
    /// on), an `SP` between words where the text has a space.
    private static func write(_ textLine: Line, number line: Int, of page: ExportPage, warped: Bool, word: inout Int,
                              into out: inout ByteWriter) {
        let n = page.number
        out.add("          <TextLine ID=\"line_")
        out.add(n)
        out.add("_")
        out.add(line)
        out.add("\" ")
        position(page.lineBoxes[line - 1].bounds, into: &out)
        out.add(">\n")
        if warped { shape(page.lineBoxes[line - 1], indent: 12, into: &out) }
        var previous: (text: String, bounds: Rect)?
        for w in textLine.words {
            word += 1
            let current = page.wordBoxes[word - 1].bounds
            // An SP only where the text has a space (none between Chinese or Japanese words).
            if let previous, Scripts.isSpaced(previous.text, w.text) {
                out.add("            <SP WIDTH=\"")
                out.add(max(0, current.x - previous.bounds.maxX))
                out.add("\" HPOS=\"")
                out.add(previous.bounds.maxX)
                out.add("\" VPOS=\"")
                out.add(previous.bounds.y)
                out.add("\"/>\n")
            }
            previous = (w.text, current)
            write(w, number: word, of: page, warped: warped, into: &out)
        }
        out.add("          </TextLine>\n")
    }

    /// One `String` (the page's `number`th word), with its shape when the page was warped and its other readings.
    private static func write(_ w: Word, number word: Int, of page: ExportPage, warped: Bool, into out: inout ByteWriter) {
        out.add("            <String ID=\"string_")
        out.add(page.number)
        out.add("_")
        out.add(word)
        out.add("\" ")
        position(page.wordBoxes[word - 1].bounds, into: &out)
        out.add(" WC=\"")
        write(thousandths: w.confidence / 100, into: &out)
        out.add("\" CONTENT=\"")
        out.add(escaped: w.text)
        out.add("\"")
        if let language = w.language, language != page.languages.first {
            out.add(" LANG=\"")
            out.add(escaped: language)
            out.add("\"")
        }
        if !warped && w.candidates.count < 2 {
            out.add("/>\n")
        } else {
            out.add(">\n")
            if warped { shape(page.wordBoxes[word - 1], indent: 14, into: &out) }
            // Other readings of the word (the first candidate is the word itself).
            for candidate in w.candidates.dropFirst() {
                out.add("              <ALTERNATIVE>")
                out.add(escaped: candidate.text)
                out.add("</ALTERNATIVE>\n")
            }
            out.add("            </String>\n")
        }
    }

    static func position(_ r: Rect, into out: inout ByteWriter) {
        out.add("HPOS=\"")
        out.add(r.x)
        out.add("\" VPOS=\"")
        out.add(r.y)
        out.add("\" WIDTH=\"")
        out.add(r.width)
        out.add("\" HEIGHT=\"")
        out.add(r.height)
        out.add("\"")
    }

    static func shape(_ box: ExportPage.Mapped, indent: Int, into out: inout ByteWriter) {
        for _ in 0..<indent { out.append(UInt8(ascii: " ")) }
        out.add("<Shape><Polygon POINTS=\"")
        out.add(polygon: box, inner: UInt8(ascii: ","))
        out.add("\"/></Shape>\n")
    }

    /// A number as XML writes it: "90", "1.5" (no exponent, no trailing zeros; at most three decimals).
    static func number(_ value: Double) -> String {
        var out = ByteWriter(capacity: 16)
        write(number: value, into: &out)
        return String(decoding: out.bytes(), as: UTF8.self)
    }

    static func write(number value: Double, into out: inout ByteWriter) {
        let thousandths = Int((value * 1000).roundedHalfAway)
        if thousandths < 0 { out.add("-") }
        out.add(abs(thousandths) / 1000)
        var fraction = abs(thousandths) % 1000
        guard fraction != 0 else { return }
        out.add(".")
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        // Leading zeros of the fraction ("1.05"), then its digits without the trailing zeros.
        var scale = 1
        for _ in 1..<digits { scale *= 10 }
        while scale > fraction {
            out.add("0")
            scale /= 10
        }
        out.add(fraction)
    }

    /// A number in [0, 1] (clamped) with three decimals: "0.953".
    static func format3(_ value: Double) -> String {
        var out = ByteWriter(capacity: 16)
        write(thousandths: value, into: &out)
        return String(decoding: out.bytes(), as: UTF8.self)
    }

    static func write(thousandths value: Double, into out: inout ByteWriter) {
        let clamped = min(1, max(0, value))
        let thousandths = Int((clamped * 1000).roundedHalfAway)
        out.add(thousandths / 1000)
        out.add(".")
        let fraction = thousandths % 1000
        if fraction < 100 { out.add("0") }
        if fraction < 10 { out.add("0") }
        out.add(fraction)
    }
}
