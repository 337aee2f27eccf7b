import Testing
import Foundation
import FarmCore
import FarmRuntime
import TestSupport
@testable import FarmRender

/// PDF/A-2B pieces of the writer (issue 19 item 1), checked with Scripts/check-pdfa (qpdf --json), pdffonts and
/// pdftotext: the metadata with a title XML and PDF strings must escape, the dates in both syntaxes, the embedded
/// placeholder font and its widths.
@Suite("PDF/A-2B writer")
struct PDFAWriterTests {
    let folder = TemporaryDirectory()

    func tool(_ name: String, _ arguments: [String]) throws -> ProcessOutput {
        let path = try #require(Run.which(name), "\(name) is not installed")
        return try Run.process(path, arguments)
    }

    func check(_ path: String) throws -> ProcessOutput {
        try tool("python3", [Fixtures.packageRoot + "/Scripts/check-pdfa", path])
    }

    static let dejaVuMono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"

    @Test("Info and XMP dates are one instant in both syntaxes")
    func dates() {
        // 2026-12-01 15:15:07 UTC
        #expect(PDFMetadata.pdfDate(1_796_138_107.9) == "D:20261201151507+00'00'")
        #expect(PDFMetadata.xmpDate(1_796_138_107.9) == "2026-12-01T15:15:07+00:00")
    }

    @Test("a placeholder in DejaVu Sans Mono with a hostile title passes the checker; the font is embedded, widths its own")
    func placeholder() throws {
        let profile = try PDFAProfile.current().get()
        let program = try FileSystem.read(Self.dejaVuMono)
        let font = try #require(TrueTypeFont(program, name: "DejaVuSansMono"))
        // DejaVu Sans Mono: every glyph 1233 of 2048 units wide.
        #expect(font.unitsPerEm == 2048 && font.width(0x4D) == 602 && font.width(0xE9) == 602 && font.width(0x20) == 602)
        let title = "a & <b> \"c\" 'd' café 中文 ) ("
        let pdf = SearchablePDF.placeholder(["Page 3 failed for good: café ∑ (x)", String(repeating: "word ", count: 40)],
                                            title: title, font: font, archive: profile, compress: { _ in nil })
        let path = folder.write("placeholder.pdf", pdf)
        let verdict = try check(path)
        #expect(verdict.status == 0, "\(verdict.text) \(verdict.stderr)")
        #expect(try tool("qpdf", ["--check", path]).status == 0)
        let info = try tool("pdfinfo", [path]).text
        #expect(info.contains("Title:           \(title)\n"), "\(info)")
        let fonts = try tool("pdffonts", [path]).text
        #expect(fonts.contains("DejaVuSansMono") && fonts.contains("TrueType") && fonts.contains(" yes "), "\(fonts)")
        let text = try tool("pdftotext", [path, "-"]).text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("Page 3 failed for good: café ? (x)"), "\(text)")
        // 62 characters of 12 pt mono fit between the margins.
        #expect(try tool("pdftotext", ["-layout", path, "-"]).text.split(separator: "\n").allSatisfy { $0.count <= 70 })
    }

    @Test("the embedded font keeps only the glyphs shown: a valid font, a tenth of the size, its text drawn")
    func subset() throws {
        let font = try #require(TrueTypeFont(try FileSystem.read(Self.dejaVuMono), name: "DejaVuSansMono"))
        let subset = try #require(font.subset(Set("Page failed".unicodeScalars.map(\.value))))
        #expect(subset.count < font.program.count / 8, "\(subset.count) of \(font.program.count) bytes")
        let again = try #require(TrueTypeFont(subset, name: "x"))
        #expect(again.width(0x50) == font.width(0x50) && again.boundingBox == font.boundingBox)
        // The page is drawn: poppler rasterizes the subset's glyphs (the frame is light gray; only text is dark), and
        // far more dark pixels than a placeholder without text (whose count is the image file's header alone).
        func darkPixels(_ lines: [String], _ name: String) throws -> Int {
            let pdf = SearchablePDF.placeholder(lines, title: "t", font: font, archive: try PDFAProfile.current().get(),
                                                compress: { _ in nil })
            _ = try tool("pdftoppm", ["-r", "100", "-gray", "-singlefile", folder.write(name + ".pdf", pdf), folder.file(name)])
            return try FileSystem.read(folder.file(name + ".pgm")).filter { $0 < 128 }.count
        }
        let dark = try darkPixels(["Page failed"], "text"), none = try darkPixels([""], "empty")
        #expect(dark > none + 200, "\(dark) dark pixels, \(none) without text")
        let path = folder.file("text.pdf")
        #expect(try check(path).status == 0)
    }

    @Test("without the archive profile the same page is a plain PDF the checker rejects; a non-font is refused")
    func plain() throws {
        let pdf = SearchablePDF.placeholder(["x"], title: "t", compress: { _ in nil })
        let verdict = try check(folder.write("plain.pdf", pdf))
        #expect(verdict.status == 1)
        #expect(verdict.text.contains("font /Helvetica is not embedded") && verdict.text.contains("no /Metadata"), "\(verdict.text)")
        #expect(TrueTypeFont(Array("not a font at all, not at all".utf8), name: "x") == nil)
        #expect(TrueTypeFont([], name: "x") == nil)
    }

    @Test("pdf_type is stored with the options: pdfa-2b by default (not written), pdf kept, unknown read as the default")
    func options() {
        var options = PageOptions()
        #expect(options.pdfType == .pdfa2b && options.json["pdf_type"] == nil)
        options.pdfType = .pdf
        #expect(PageOptions(json: options.json).pdfType == .pdf)
        #expect(PageOptions(json: .object([("pdf_type", "pdfa-9")])).pdfType == .pdfa2b)
    }
}
