import FarmCore

/// hOCR 1.2 (XHTML with ocr_* classes), rendered from the result model in reading order.
public enum HOCR {
    public static func header(system: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
            "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
        <html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
         <head>
          <title></title>
          <meta http-equiv="Content-Type" content="text/html;charset=utf-8"/>
          <meta name='ocr-system' content='\(XML.escaped(system))'/>
          <meta name='ocr-capabilities' content='ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf ocrp_lang ocrp_poly'/>
         </head>
         <body>

        """
    }

    public static let footer = " </body>\n</html>\n"

    /// One `ocr_page` div. Boxes are in the original image; `poly` gives the exact quadrilateral when the page
    /// was warped or turned.
    public static func page(_ page: ExportPage) -> String {
        let n = page.number
        var out = "  <div class='ocr_page' id='page_\(n)' title='image \"\(XML.escaped(page.imageName))\"; "
            + "bbox 0 0 \(page.imageWidth) \(page.imageHeight); ppageno \(n - 1)"
        // The boxes are in the original image, so its resolution is the one they are measured in.
        let resolution = page.originalResolution
        if resolution > 0 { out += "; scan_res \(resolution) \(resolution)" }
        out += "'>\n"
        var line = 0, word = 0, paragraph = 0
        for (b, block) in page.result.blocks.enumerated() {
            out += "   <div class='ocr_carea' id='block_\(n)_\(b + 1)' title='\(geometry(block.box, page.bounds(of: block), page))'>\n"
            for par in block.paragraphs {
                paragraph += 1
                out += "    <p class='ocr_par' id='par_\(n)_\(paragraph)' lang='\(page.language)' "
                    + "title='\(geometry(par.box, page.bounds(of: par), page))\(textAngle(par.box, page))'>\n"
                for textLine in par.lines {
                    line += 1
                    out += "     <span class='ocr_line' id='line_\(n)_\(line)' "
                        + "title='\(geometry(textLine.box, page.bounds(of: textLine), page))\(textAngle(textLine.box, page))'>"
                    for (index, w) in textLine.words.enumerated() {
                        word += 1
                        // Spaced as the text is: none between Chinese or Japanese words.
                        if index > 0 && Scripts.isSpaced(textLine.words[index - 1].text, w.text) { out += " " }
                        out += "<span class='ocrx_word' id='word_\(n)_\(word)' title='\(geometry(w.box, page)); "
                            + "x_wconf \(Int(w.confidence.rounded()))'"
                        if let language = w.language, language != page.languages.first { out += " lang='\(XML.escaped(language))'" }
                        out += ">\(XML.escaped(w.text))</span>"
                    }
                    out += "</span>\n"
                }
                out += "    </p>\n"
            }
            out += "   </div>\n"
        }
        out += "  </div>\n"
        return out
    }

    static func geometry(_ box: Rect, _ page: ExportPage) -> String { geometry(box, page.bounds(box), page) }

    /// `bbox` is `bounds` (a line's is the union of its words'); `poly` the box's own quadrilateral.
    static func geometry(_ box: Rect, _ r: Rect, _ page: ExportPage) -> String {
        var text = "bbox \(r.x) \(r.y) \(r.maxX) \(r.maxY)"
        if page.isWarped { text += "; poly " + page.polygon(box).map { "\($0.x) \($0.y)" }.joined(separator: " ") }
        return text
    }

    /// `; textangle A` (degrees counterclockwise, as Tesseract writes it for turned text) where the text does not
    /// run along the image's x axis: readers (OCRmyPDF's renderer) lay the line's words along it.
    static func textAngle(_ box: Rect, _ page: ExportPage) -> String {
        let angle = page.textAngle(of: box)
        return angle == 0 ? "" : "; textangle \(ALTO.number(angle))"
    }
}
