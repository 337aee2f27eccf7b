import Testing
import Foundation
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport

/// Issue 19 item 1: PDFs are PDF/A-2B by default (`--pdf-type pdfa-2b|pdf`), for `ocr --format pdf`, the page PDFs
/// the farm stores and `export`'s merged documents (a degraded placeholder page among them).
///
/// veraPDF is not available here: `Scripts/check-pdfa` checks the PDF/A-2B rules that apply to our files through
/// `qpdf --json` (XMP with pdfaid part 2 / conformance B agreeing with /Info, a GTS_PDFA1 output intent whose ICC
/// profile matches its /N, trailer /ID, every font embedded, no encryption, LZW, JavaScript, SMask or transparency
/// group, an end of line before every endstream, header <= 1.7). Each test also shows that it rejects the plain
/// PDF (`--pdf-type pdf`), so a pass means something.
@Suite("PDF/A-2B output (end to end)", .serialized)
struct PDFATests {
    static func tool(_ name: String, _ arguments: [String]) throws -> ProcessOutput {
        let path = try #require(Run.which(name), "\(name) is not installed")
        return try Run.process(path, arguments)
    }

    /// The checker's verdict: its output, and whether the file passed.
    static func check(_ pdf: String) throws -> (passed: Bool, text: String) {
        let out = try tool("python3", [Fixtures.packageRoot + "/Scripts/check-pdfa", pdf])
        return (out.status == 0, out.text + out.stderr)
    }

    static func qpdfCheck(_ pdf: String) throws {
        let check = try tool("qpdf", ["--check", pdf])
        #expect(check.status == 0, "\(check.text) \(check.stderr)")
    }

    static func info(_ pdf: String) throws -> String { try tool("pdfinfo", [pdf]).text }

    @Test("ocr --format pdf: one page and a merged two-page document pass; --pdf-type pdf does not claim PDF/A")
    func ocrOutput() throws {
        let folder = TemporaryDirectory()
        let page = Fixtures.packageRoot + "/Samples/pages/clean-000.png"
        let one = folder.file("one.pdf"), two = folder.file("two.pdf"), plain = folder.file("plain.pdf")
        let environment = ["OMP_THREAD_LIMIT": "1"]
        for (output, extra) in [(one, [page]), (two, [page, Fixtures.path("pdf/two-columns.png")]), (plain, ["--pdf-type", "pdf", page])] {
            let run = try Run.ocrfarm(["ocr", "--jobs", "1", "--format", "pdf", "--out", output] + extra, environment: environment)
            #expect(run.status == 0, "\(run.stderr)")
            try Self.qpdfCheck(output)
        }
        for pdf in [one, two] {
            let verdict = try Self.check(pdf)
            #expect(verdict.passed, "\(pdf): \(verdict.text)")
            let info = try Self.info(pdf)
            #expect(info.contains("Title:           \(page)"), "\(info)")
        }
        #expect(try Self.tool("qpdf", ["--show-npages", two]).text == "2\n")
        #expect(try Self.tool("pdftotext", [two, "-"]).text.contains("redistribute"), "the merged text layer is still there")
        let verdict = try Self.check(plain)
        #expect(!verdict.passed)
        #expect(verdict.text.contains("no /Metadata stream") && verdict.text.contains("no /OutputIntents"), "\(verdict.text)")
        // The option is refused when misspelled, not ignored.
        let wrong = try Run.ocrfarm(["ocr", "--format", "pdf", "--pdf-type", "pdfa-1b", page])
        #expect(wrong.status == 64, "\(wrong.stderr)")
    }

    @Test("run: the stored page PDF passes; export: the merged document with a placeholder page passes, its font embedded")
    func storedAndExported() throws {
        let farm = FarmHarness()
        _ = farm.folder.write("a.png", try FileSystem.read(Fixtures.packageRoot + "/Samples/pages/clean-000.png"))
        // A truncated PNG fails for good as decode-failed: in the export, a placeholder page of text.
        _ = farm.folder.write("b.png", Array(try Fixtures.read("pdf/two-columns.png").prefix(6000)))
        let run = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", "--document", "vol", "a.png", "b.png"],
                                  environment: ["OMP_THREAD_LIMIT": "1"], currentDirectory: farm.folder.path)
        #expect(run.status == 65, "\(run.stderr)")

        let store = try Store(path: farm.storePath, readOnly: true)
        let pages = try store.pages().sorted { $0.number < $1.number }
        #expect(pages.map(\.state) == [.done, .failed])
        let stored = try #require(try store.artifact("pdf", of: pages[0].id))
        let storedPath = farm.folder.write("stored.pdf", stored)
        let storedVerdict = try Self.check(storedPath)
        #expect(storedVerdict.passed, "\(storedVerdict.text)")
        try Self.qpdfCheck(storedPath)

        let out = farm.folder.file("out")
        let export = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", out, "--format", "pdf"])
        #expect(export.stderrLines.contains { $0.contains("page 2 (decode-failed, placeholder)") }, "\(export.stderr)")
        let pdf = out + "/vol.pdf"
        #expect(try Self.tool("qpdf", ["--show-npages", pdf]).text == "2\n")
        try Self.qpdfCheck(pdf)
        let verdict = try Self.check(pdf)
        #expect(verdict.passed, "\(verdict.text)")
        let info = try Self.info(pdf)
        #expect(info.contains("Title:           vol\n") && info.contains("Producer:        ocrfarm"), "\(info)")
        // The placeholder's text is in DejaVu Sans Mono, embedded; the glyphless font is embedded too.
        let fonts = try Self.tool("pdffonts", [pdf]).text.split(separator: "\n").dropFirst(2)
        #expect(fonts.contains { $0.hasPrefix("DejaVuSansMono ") && $0.contains("TrueType") }, "\(fonts)")
        #expect(!fonts.isEmpty && fonts.allSatisfy { $0.split(separator: " ", omittingEmptySubsequences: true).reversed()[4] == "yes" },
                "every font embedded: \(fonts)")
        let placeholder = try Self.tool("pdftotext", ["-f", "2", "-l", "2", pdf, "-"]).text
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(placeholder.contains("Page 2 failed for good: decode-failed"), "\(placeholder)")

        // --pdf-type pdf: a plain document, still titled, with the standard font.
        let plainOut = farm.folder.file("plain")
        _ = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", plainOut, "--format", "pdf", "--pdf-type", "pdf"])
        let plain = plainOut + "/vol.pdf"
        try Self.qpdfCheck(plain)
        let plainVerdict = try Self.check(plain)
        #expect(!plainVerdict.passed && plainVerdict.text.contains("Helvetica is not embedded"), "\(plainVerdict.text)")
        #expect(try Self.info(plain).contains("Title:           vol\n"))
    }
}
