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
        let n = page.number
        var out = "    <Page ID=\"page_\(n)\" PHYSICAL_IMG_NR=\"\(n)\" WIDTH=\"\(page.imageWidth)\" HEIGHT=\"\(page.imageHeight)\""
        // The page's text direction in the image (degrees counterclockwise); blocks say their own where they differ.
        let pageAngle = page.textAngle
        out += (pageAngle == 0 ? "" : " ROTATION=\"\(number(pageAngle))\"") + ">\n"
        out += "      <PrintSpace HPOS=\"0\" VPOS=\"0\" WIDTH=\"\(page.imageWidth)\" HEIGHT=\"\(page.imageHeight)\">\n"
        var line = 0, word = 0
        for (b, block) in page.result.blocks.enumerated() {
            let lines = block.paragraphs.flatMap(\.lines)
            guard !lines.isEmpty else { continue }
            let blockAngle = page.textAngle(of: block.box)
            out += "        <TextBlock ID=\"block_\(n)_\(b + 1)\" \(position(page.bounds(of: block)))"
                + (blockAngle == 0 && pageAngle == 0 ? "" : " ROTATION=\"\(number(blockAngle))\"") + " LANG=\"\(page.language)\">\n"
            out += shape(block.box, page, indent: 10)
            for textLine in lines {
                line += 1
                out += "          <TextLine ID=\"line_\(n)_\(line)\" \(position(page.bounds(of: textLine)))>\n"
                out += shape(textLine.box, page, indent: 12)
                for (index, w) in textLine.words.enumerated() {
                    word += 1
                    // An SP only where the text has a space (none between Chinese or Japanese words).
                    if index > 0 && Scripts.isSpaced(textLine.words[index - 1].text, w.text) {
                        let previous = page.bounds(textLine.words[index - 1].box), current = page.bounds(w.box)
                        out += "            <SP WIDTH=\"\(max(0, current.x - previous.maxX))\" HPOS=\"\(previous.maxX)\" VPOS=\"\(previous.y)\"/>\n"
                    }
                    let confidence = format3(w.confidence / 100)
                    out += "            <String ID=\"string_\(n)_\(word)\" \(position(w.box, page)) WC=\"\(confidence)\" "
                        + "CONTENT=\"\(XML.escaped(w.text))\""
                    if let language = w.language, language != page.languages.first { out += " LANG=\"\(XML.escaped(language))\"" }
                    let wordShape = shape(w.box, page, indent: 14)
                    if wordShape.isEmpty && w.candidates.count < 2 {
                        out += "/>\n"
                    } else {
                        out += ">\n" + wordShape
                        // Other readings of the word (the first candidate is the word itself).
                        for candidate in w.candidates.dropFirst() {
                            out += "              <ALTERNATIVE>\(XML.escaped(candidate.text))</ALTERNATIVE>\n"
                        }
                        out += "            </String>\n"
                    }
                }
                out += "          </TextLine>\n"
            }
            out += "        </TextBlock>\n"
        }
        out += "      </PrintSpace>\n    </Page>\n"
        return out
    }

    static func position(_ box: Rect, _ page: ExportPage) -> String { position(page.bounds(box)) }

    static func position(_ r: Rect) -> String {
        return "HPOS=\"\(r.x)\" VPOS=\"\(r.y)\" WIDTH=\"\(r.width)\" HEIGHT=\"\(r.height)\""
    }

    static func shape(_ box: Rect, _ page: ExportPage, indent: Int) -> String {
        guard page.isWarped else { return "" }
        let pad = String(repeating: " ", count: indent)
        let points = page.polygon(box).map { "\($0.x),\($0.y)" }.joined(separator: " ")
        return "\(pad)<Shape><Polygon POINTS=\"\(points)\"/></Shape>\n"
    }

    /// A number as XML writes it: "90", "1.5" (no exponent, no trailing zeros; at most three decimals).
    static func number(_ value: Double) -> String {
        let thousandths = Int((value * 1000).rounded())
        let whole = String(abs(thousandths) / 1000), fraction = abs(thousandths) % 1000
        var text = (thousandths < 0 ? "-" : "") + whole
        if fraction != 0 {
            var digits = String(fraction)
            digits = String(repeating: "0", count: 3 - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text
    }

    static func format3(_ value: Double) -> String {
        let clamped = min(1, max(0, value))
        let thousandths = Int((clamped * 1000).rounded())
        let fraction = String(thousandths % 1000)
        return "\(thousandths / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
