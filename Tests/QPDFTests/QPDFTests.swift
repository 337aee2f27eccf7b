import Testing
import QPDF
import TestSupport

/// A minimal valid one-page PDF whose page shows `text`.
func onePagePDF(_ text: String) -> [UInt8] {
    var objects: [String] = []
    objects.append("<< /Type /Catalog /Pages 2 0 R >>")
    objects.append("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
    objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>")
    let stream = "BT /F1 18 Tf 20 50 Td (\(text)) Tj ET"
    objects.append("<< /Length \(stream.utf8.count) >>\nstream\n\(stream)\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    var pdf = "%PDF-1.4\n"
    var offsets: [Int] = []
    for (index, object) in objects.enumerated() {
        offsets.append(pdf.utf8.count)
        pdf += "\(index + 1) 0 obj\n\(object)\nendobj\n"
    }
    let xref = pdf.utf8.count
    pdf += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
    for offset in offsets {
        let digits = String(offset)
        pdf += String(repeating: "0", count: 10 - digits.count) + digits + " 00000 n \n"
    }
    pdf += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
    return Array(pdf.utf8)
}

@Suite("qpdf")
struct QPDFTests {
    let folder = TemporaryDirectory("qpdf-test")

    @Test("merges one-page PDFs into one document in the given order")
    func merge() throws {
        let first = folder.write("first.pdf", onePagePDF("alpha"))
        let second = folder.write("second.pdf", onePagePDF("bravo"))
        let third = folder.write("third.pdf", onePagePDF("charlie"))
        let output = folder.file("merged.pdf")
        try QPDF.merge([second, first, third], into: output)
        #expect(try QPDF.info(output).pageCount == 3)
        let text = try Run.process("/usr/bin/pdftotext", [output, "-"]).text
        let words = text.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        #expect(words == ["bravo", "alpha", "charlie"])
    }

    @Test("a missing or broken input is an error with qpdf's reason, and nothing is printed")
    func errors() throws {
        let good = folder.write("good.pdf", onePagePDF("alpha"))
        do {
            try QPDF.merge([good, folder.file("missing.pdf")], into: folder.file("out.pdf"))
            Issue.record("missing input should fail")
        } catch {
            #expect(error.message.contains("missing.pdf"))
        }
        let junk = folder.write("junk.pdf", Array("%PDF-1.4 this is not really a pdf".utf8))
        #expect(throws: QPDFError.self) { try QPDF.info(junk) }
        #expect(throws: QPDFError.self) { try QPDF.merge([], into: folder.file("none.pdf")) }
    }

    @Test("info reports the page count and encryption")
    func info() throws {
        let path = folder.write("one.pdf", onePagePDF("alpha"))
        let info = try QPDF.info(path)
        #expect(info.pageCount == 1)
        #expect(!info.isEncrypted)
        #expect(QPDF.version.hasPrefix("11."))
    }
}
