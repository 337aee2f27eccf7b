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
        var out = ByteWriter(capacity: 1024 + 200 * page.wordCount)
        write(page, into: &out)
        return String(decoding: out.bytes(), as: UTF8.self)
    }

    /// The whole one-page document (`header`, `page`, `footer`) as UTF-8.
    public static func document(_ page: ExportPage, system: String) -> [UInt8] {
        var out = ByteWriter(capacity: 2048 + 200 * page.wordCount)
        out.append(header(system: system))
        write(page, into: &out)
        out.add(" </body>\n</html>\n")
        return out.bytes()
    }

    /// `page(page)`, appended to `out`.
    public static func write(_ page: ExportPage, into out: inout ByteWriter) {
        let n = page.number
        let language = page.language, mainLanguage = page.languages.first
        out.add("  <div class='ocr_page' id='page_")
        out.add(n)
        out.add("' title='image \"")
        out.add(escaped: page.imageName)
        out.add("\"; bbox 0 0 ")
        out.add(page.imageWidth)
        out.add(" ")
        out.add(page.imageHeight)
        out.add("; ppageno ")
        out.add(n - 1)
        // The boxes are in the original image, so its resolution is the one they are measured in.
        let resolution = page.originalResolution
        if resolution > 0 {
            out.add("; scan_res ")
            out.add(resolution)
            out.add(" ")
            out.add(resolution)
        }
        out.add("'>\n")
        var line = 0, word = 0, paragraph = 0
        for (b, block) in page.result.blocks.enumerated() {
            out.add("   <div class='ocr_carea' id='block_")
            out.add(n)
            out.add("_")
            out.add(b + 1)
            out.add("' title='")
            geometry(page.blockBoxes[b], page, into: &out)
            out.add("'>\n")
            for par in block.paragraphs {
                paragraph += 1
                out.add("    <p class='ocr_par' id='par_")
                out.add(n)
                out.add("_")
                out.add(paragraph)
                out.add("' lang='")
                out.append(language)
                out.add("' title='")
                geometry(page.paragraphBoxes[paragraph - 1], page, into: &out)
                textAngle(par.box, page, into: &out)
                out.add("'>\n")
                for textLine in par.lines {
                    line += 1
                    out.add("     <span class='ocr_line' id='line_")
                    out.add(n)
                    out.add("_")
                    out.add(line)
                    out.add("' title='")
                    geometry(page.lineBoxes[line - 1], page, into: &out)
                    textAngle(textLine.box, page, into: &out)
                    out.add("'>")
                    for (index, w) in textLine.words.enumerated() {
                        word += 1
                        // Spaced as the text is: none between Chinese or Japanese words.
                        if index > 0 && Scripts.isSpaced(textLine.words[index - 1].text, w.text) { out.add(" ") }
                        out.add("<span class='ocrx_word' id='word_")
                        out.add(n)
                        out.add("_")
                        out.add(word)
                        out.add("' title='")
                        geometry(page.wordBoxes[word - 1], page, into: &out)
                        out.add("; x_wconf ")
                        out.add(Int(w.confidence.roundedHalfAway))
                        out.add("'")
                        if let language = w.language, language != mainLanguage {
                            out.add(" lang='")
                            out.add(escaped: language)
                            out.add("'")
                        }
                        out.add(">")
                        out.add(escaped: w.text)
                        out.add("</span>")
                    }
                    out.add("</span>\n")
                }
                out.add("    </p>\n")
            }
            out.add("   </div>\n")
        }
        out.add("  </div>\n")
    }

    /// `bbox` is the box's `bounds` (a line's is the union of its words'); `poly` its own quadrilateral.
    static func geometry(_ box: ExportPage.Mapped, _ page: ExportPage, into out: inout ByteWriter) {
        out.add("bbox ")
        out.add(edges: box.bounds)
        if page.isWarped {
            out.add("; poly ")
            out.add(polygon: box, inner: UInt8(ascii: " "))
        }
    }

    /// `; textangle A` (degrees counterclockwise, as Tesseract writes it for turned text) where the text does not
    /// run along the image's x axis: readers (OCRmyPDF's renderer) lay the line's words along it.
    static func textAngle(_ box: Rect, _ page: ExportPage, into out: inout ByteWriter) {
        let angle = page.textAngle(of: box)
        guard angle != 0 else { return }
        out.add("; textangle ")
        ALTO.write(number: angle, into: &out)
    }
}
