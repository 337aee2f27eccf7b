import Foundation
import FarmCore
import Testing
import FarmRuntime
import TestSupport

/// Issue 36 item 4: a PDF page the orient stage turns is turned upright in the output by its /Rotate (as OCRmyPDF's
/// `--rotate-pages`), its content untouched; `--pdf-image corrected` is refused for PDF input by `ocr`.
@Suite("Upright PDF pages (end to end, real Tesseract, qpdf, poppler)", .serialized)
struct UprightPDFTests {
    let folder = TemporaryDirectory("e2e-upright")
    let environment: [String: String?] = ["OMP_THREAD_LIMIT": "1"]

    static func cardinal() throws -> String {
        let path = Fixtures.sharedCorpus + "/real/ocrmypdf-test-resources/cardinal.pdf"
        try #require(FileManager.default.fileExists(atPath: path), "\(path) is missing (the shared corpus)")
        return path
    }

    /// Page `page` (from 1) rendered by pdftoppm at 100 dpi: its size, and the turn Tesseract's OSD (`--psm 0`, a
    /// separate judge from ocrfarm's orient stage) says it needs ("Rotate: N"), nil when OSD gives none.
    func rendered(_ pdf: String, page: Int) throws -> (width: Int, height: Int, rotate: Int?) {
        let prefix = folder.file("page\(page)")
        let render = try Run.process("/usr/bin/pdftoppm", ["-r", "100", "-gray", "-singlefile", "-f", "\(page)", "-l", "\(page)", pdf, prefix])
        try #require(render.status == 0, "\(render.stderr)")
        let image = prefix + ".pgm"
        // PGM header: P5, width, height.
        let header = String(decoding: try FileSystem.read(image).prefix(40), as: UTF8.self).split(whereSeparator: \.isWhitespace)
        let osd = try Run.process("/usr/bin/tesseract", [image, "-", "--psm", "0"], environment: environment)
        let rotate = (osd.text + osd.stderr).split(separator: "\n").first { $0.hasPrefix("Rotate:") }
            .flatMap { Int($0.dropFirst("Rotate:".count).trimmingCharacters(in: .whitespaces)) }
        return (Int(header[1]) ?? 0, Int(header[2]) ?? 0, rotate)
    }

    @Test("cardinal.pdf (pages at 0, 90, 180, 270) comes out with all four pages upright, by /Rotate, text in reading order")
    func cardinalUpright() throws {
        let source = try Self.cardinal()
        // The source's pages are turned: OSD sees it (so the test can tell).
        let turned = try (1...4).map { try rendered(source, page: $0) }
        #expect(turned.filter { $0.rotate != 0 }.count >= 2, "\(turned)")
        let out = folder.file("cardinal-ocr.pdf")
        let run = try Run.ocrfarm(["ocr", "--jobs", "2", source, "--format", "pdf", "--out", out], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        for page in 1...4 {
            let shown = try rendered(out, page: page)
            #expect(shown.height > shown.width, "page \(page) is portrait as shown: \(shown)")
            #expect(shown.rotate == 0, "page \(page): Tesseract's OSD finds it upright: \(shown)")
            let text = try Run.process("/usr/bin/pdftotext", ["-f", "\(page)", "-l", "\(page)", out, "-"]).text
            #expect(text.hasPrefix("The LinnSequencer"), "page \(page): the text layer reads in order: \(text.prefix(80))")
        }
        let verdict = try Run.process("/usr/bin/python3", [Fixtures.packageRoot + "/Scripts/check-pdfa", out])
        #expect(verdict.status == 0, "\(verdict.text)")
    }

    @Test("ocr refuses --pdf-image corrected for PDF input, naming the file (exit 64)")
    func correctedRefused() throws {
        let source = try Self.cardinal()
        let out = folder.file("refused.pdf")
        let run = try Run.ocrfarm(["ocr", source, "--format", "pdf", "--pdf-image", "corrected", "--out", out], environment: environment)
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("--pdf-image corrected") && run.stderr.contains(source), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
