import FarmCore

/// PAGE XML 2019-07-15 (PRImA), rendered from the result model. Every region, line and word has its exact
/// polygon in the original image (four points: a rectangle on the corrected page is a quadrilateral in a photo),
/// text at every level, and the regions' reading order.
public enum PAGEXML {
    public static let namespace = "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"

    /// A whole PAGE document for one page (PAGE has one page per file).
    public static func document(_ page: ExportPage, creator: String, created: Double) -> String {
        let time = Clock.iso8601(created)
        let n = page.number
        var out = """
        <?xml version="1.0" encoding="UTF-8"?>
        <PcGts xmlns="\(namespace)" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
        xsi:schemaLocation="\(namespace) \(namespace)/pagecontent.xsd">
          <Metadata>
            <Creator>\(XML.escaped(creator))</Creator>
            <Created>\(time)</Created>
            <LastChange>\(time)</LastChange>
          </Metadata>
          <Page imageFilename="\(XML.escaped(page.imageName))" imageWidth="\(page.imageWidth)" imageHeight="\(page.imageHeight)"\(orientation(page.textAngle))>

        """
        let blocks = page.result.blocks.enumerated().filter { !$0.element.paragraphs.flatMap(\.lines).isEmpty }
        if !blocks.isEmpty {
            out += "    <ReadingOrder>\n      <OrderedGroup id=\"ro_\(n)\">\n"
            for (index, (b, _)) in blocks.enumerated() {
                out += "        <RegionRefIndexed index=\"\(index)\" regionRef=\"region_\(n)_\(b + 1)\"/>\n"
            }
            out += "      </OrderedGroup>\n    </ReadingOrder>\n"
        }
        var line = 0, word = 0
        for (b, block) in blocks {
            let lines = block.paragraphs.flatMap(\.lines)
            out += "    <TextRegion id=\"region_\(n)_\(b + 1)\"\(orientation(page.textAngle(of: block.box), always: page.textAngle != 0)) "
                + "type=\"paragraph\" primaryLanguage=\"\(languageName(page.language))\">\n"
            out += "      <Coords points=\"\(points(block.box, page))\"/>\n"
            var regionText: [String] = []
            for textLine in lines {
                line += 1
                out += "      <TextLine id=\"line_\(n)_\(line)\">\n"
                out += "        <Coords points=\"\(points(textLine.box, page))\"/>\n"
                for w in textLine.words {
                    word += 1
                    out += "        <Word id=\"word_\(n)_\(word)\">\n"
                    out += "          <Coords points=\"\(points(w.box, page))\"/>\n"
                    out += "          <TextEquiv conf=\"\(ALTO.format3(w.confidence / 100))\"><Unicode>\(XML.escaped(w.text))</Unicode></TextEquiv>\n"
                    out += "        </Word>\n"
                }
                let text = textLine.text
                regionText.append(text)
                out += "        <TextEquiv><Unicode>\(XML.escaped(text))</Unicode></TextEquiv>\n"
                out += "      </TextLine>\n"
            }
            out += "      <TextEquiv><Unicode>\(XML.escaped(regionText.joined(separator: "\n")))</Unicode></TextEquiv>\n"
            out += "    </TextRegion>\n"
        }
        out += "  </Page>\n</PcGts>\n"
        return out
    }

    /// ` orientation="A"`: PAGE's angle is the clockwise turn that sets the text upright, in (-180, 180], which is the
    /// text's counterclockwise angle in the image (OCR-D turns the image by −A counterclockwise). Left out at 0
    /// unless `always` (a region on a turned page states its own angle, since OCR-D reads a missing one as 0).
    static func orientation(_ textAngle: Double, always: Bool = false) -> String {
        guard textAngle != 0 || always else { return "" }
        return " orientation=\"\(ALTO.number(textAngle > 180 ? textAngle - 360 : textAngle))\""
    }

    static func points(_ box: Rect, _ page: ExportPage) -> String {
        page.polygon(box).map { "\($0.x),\($0.y)" }.joined(separator: " ")
    }

    /// PAGE names languages in English ("English", "Chinese"), from a fixed list.
    static func languageName(_ code: String) -> String {
        let names = ["eng": "English", "chi": "Chinese", "deu": "German", "fra": "French", "spa": "Spanish",
                     "ita": "Italian", "por": "Portuguese", "nld": "Dutch", "rus": "Russian", "jpn": "Japanese",
                     "kor": "Korean", "ara": "Arabic", "heb": "Hebrew", "hin": "Hindi", "pol": "Polish",
                     "ces": "Czech", "swe": "Swedish", "dan": "Danish", "fin": "Finnish", "nor": "Norwegian",
                     "ell": "Greek", "tur": "Turkish", "ukr": "Ukrainian", "lat": "Latin"]
        return names[code] ?? "English"
    }
}
