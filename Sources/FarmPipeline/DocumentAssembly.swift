import FarmCore
import QPDF
import Tesseract

/// Wraps page-level renderings into whole documents.
public enum DocumentAssembly {
    /// The start of an hOCR document; page `div`s follow, then `hocrFooter`.
    public static var hocrHeader: String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
            "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
        <html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
         <head>
          <title></title>
          <meta http-equiv="Content-Type" content="text/html;charset=utf-8"/>
          <meta name='ocr-system' content='ocrfarm (tesseract \(TesseractEngine.version))'/>
          <meta name='ocr-capabilities' content='ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf'/>
         </head>
         <body>

        """
    }

    public static let hocrFooter = " </body>\n</html>\n"

    /// The start of an ALTO document; `Page` elements follow, then `altoFooter`.
    public static func altoHeader(sourceName: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <alto xmlns="http://www.loc.gov/standards/alto/ns-v3#" xmlns:xlink="http://www.w3.org/1999/xlink" \
        xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
        xsi:schemaLocation="http://www.loc.gov/standards/alto/ns-v3# http://www.loc.gov/alto/v3/alto-3-0.xsd">
        \t<Description>
        \t\t<MeasurementUnit>pixel</MeasurementUnit>
        \t\t<sourceImageInformation>
        \t\t\t<fileName>\(XML.escaped(sourceName))</fileName>
        \t\t</sourceImageInformation>
        \t\t<OCRProcessing ID="OCR_0">
        \t\t\t<ocrProcessingStep>
        \t\t\t\t<processingSoftware>
        \t\t\t\t\t<softwareName>ocrfarm (tesseract \(TesseractEngine.version))</softwareName>
        \t\t\t\t</processingSoftware>
        \t\t\t</ocrProcessingStep>
        \t\t</OCRProcessing>
        \t</Description>
        \t<Layout>

        """
    }

    public static let altoFooter = "\t</Layout>\n</alto>\n"

    /// Merges one-page PDFs into one document, in order.
    public static func mergePDFs(_ paths: [String], into output: String) throws(PageFailure) {
        do {
            try QPDF.merge(paths, into: output)
        } catch {
            throw PageFailure(stage: "render", code: .internalError, message: error.description)
        }
    }
}

/// XML text escaping.
public enum XML {
    public static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // Characters XML 1.0 forbids are dropped rather than producing an unparseable document.
                let v = scalar.value
                if v == 0x9 || v == 0xA || v == 0xD || (0x20...0xD7FF).contains(v) || (0xE000...0xFFFD).contains(v)
                    || (0x10000...0x10FFFF).contains(v)
                {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
