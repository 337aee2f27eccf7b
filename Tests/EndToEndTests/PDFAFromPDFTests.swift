import Foundation
import FarmCore
import FarmRuntime
import FarmStore
import Testing
import TestSupport

/// Issue 36 item 1: a PDF written from PDF input under `--pdf-type pdfa-2b` (the default) is PDF/A-2B, checked by
/// `Scripts/check-pdfa`, or says loudly why not (a warning naming the file and the page, exit status 10). Without
/// anything to convert, qpdf adds the metadata and the page images stay byte-identical; a font not embedded is
/// embedded by Ghostscript's pdfwrite.
@Suite("PDF/A-2B from PDF input (end to end, real Tesseract, qpdf, Ghostscript, poppler)", .serialized)
struct PDFAFromPDFTests {
    let folder = TemporaryDirectory("e2e-pdfa-pdf")
    let environment: [String: String?] = ["OMP_THREAD_LIMIT": "1"]
    static let checker = Fixtures.packageRoot + "/Scripts/check-pdfa"

    /// OCRmyPDF's test resource `name` in the shared corpus (the test fails, not skips, without it).
    static func resource(_ name: String) throws -> String {
        let path = Fixtures.sharedCorpus + "/real/ocrmypdf-test-resources/" + name
        try #require(FileManager.default.fileExists(atPath: path), "\(path) is missing (the shared corpus)")
        return path
    }

    static func check(_ pdf: String) throws -> (passed: Bool, text: String) {
        let out = try Run.process("/usr/bin/python3", [checker, pdf])
        return (out.status == 0, out.text + out.stderr)
    }

    /// The raw (undecoded) bytes of every image XObject in the file (base64), sorted.
    static func imageStreams(_ pdf: String) throws -> [String] {
        let out = try Run.process("/usr/bin/qpdf", ["--json=2", "--json-stream-data=inline", "--decode-level=none", pdf])
        let document = try #require(try JSONSerialization.jsonObject(with: out.stdout) as? [String: Any])
        let objects = try #require((document["qpdf"] as? [Any])?.last as? [String: Any])
        var digests: [String] = []
        for case let entry as [String: Any] in objects.values {
            guard let stream = entry["stream"] as? [String: Any], let dictionary = stream["dict"] as? [String: Any],
                  dictionary["/Subtype"] as? String == "/Image" else { continue }
            let data = Data(base64Encoded: stream["data"] as? String ?? "") ?? Data()
            digests.append(data.base64EncodedString())
        }
        return digests.sorted()
    }

    /// The fonts `pdffonts` lists, each with whether it is embedded.
    static func fonts(_ pdf: String) throws -> [(name: String, embedded: Bool)] {
        try Run.process("/usr/bin/pdffonts", [pdf]).text.split(separator: "\n").dropFirst(2).map { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return (String(fields[0]), fields.reversed()[4] == "yes")
        }
    }

    @Test("linn.pdf (a JBIG2 scan, no XMP, no output intent) comes out PDF/A-2B, its page image byte-identical, its text added")
    func scanKeepsItsImage() throws {
        let source = try Self.resource("linn.pdf")
        #expect(try !Self.check(source).passed, "the source is not PDF/A-2B already")
        let out = folder.file("linn-ocr.pdf")
        let run = try Run.ocrfarm(["ocr", source, "--format", "pdf", "--out", out], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let verdict = try Self.check(out)
        #expect(verdict.passed, "\(verdict.text)")
        #expect(try Run.process("/usr/bin/qpdf", ["--check", out]).status == 0)
        let before = try Self.imageStreams(source), after = try Self.imageStreams(out)
        #expect(!before.isEmpty && before == after, "the page image is kept byte for byte")
        let text = try Run.process("/usr/bin/pdftotext", [out, "-"]).text
        #expect(text.contains("LinnSequencer"), "\(text)")
        #expect(!run.stderr.contains("Ghostscript"), "nothing needed converting: \(run.stderr)")
    }

    @Test("a born-digital page (Helvetica not embedded) and an image-only scan (linn.pdf) in one PDF: Ghostscript embeds the font, both keep their text")
    func bornDigitalConverted() throws {
        let born = try TestPDFs.bornDigital(folder)
        #expect(try Self.fonts(born).contains { $0.name == "Helvetica" && !$0.embedded })
        let scan = try Self.resource("linn.pdf")
        let out = folder.file("mixed.pdf")
        let run = try Run.ocrfarm(["ocr", born, scan, "--format", "pdf", "--out", out], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("converted by Ghostscript") && run.stderr.contains("Helvetica"), "\(run.stderr)")
        let verdict = try Self.check(out)
        #expect(verdict.passed, "\(verdict.text)")
        let fonts = try Self.fonts(out)
        #expect(!fonts.isEmpty && fonts.allSatisfy(\.embedded), "\(fonts)")
        let first = try Run.process("/usr/bin/pdftotext", ["-f", "1", "-l", "1", out, "-"]).text
        for line in TestPDFs.bornDigitalLines { #expect(first.contains(line), "\(first)") }
        let second = try Run.process("/usr/bin/pdftotext", ["-f", "2", "-l", "2", out, "-"]).text
        #expect(second.contains("LinnSequencer") && second.split(whereSeparator: \.isWhitespace).count > 200,
                "the scan's text layer survives Ghostscript: \(second)")
    }

    @Test("without Ghostscript the born-digital PDF is a plain PDF, said loudly: file and page named, exit status 10")
    func saidLoudly() throws {
        let born = try TestPDFs.bornDigital(folder)
        let out = folder.file("plain.pdf")
        var environment = self.environment
        environment["OCRFARM_GHOSTSCRIPT"] = folder.file("no-such-gs")
        let run = try Run.ocrfarm(["ocr", born, "--format", "pdf", "--out", out], environment: environment)
        #expect(run.status == 10, "\(run.stderr)")
        #expect(run.stderr.contains(born) && run.stderr.contains("page 1: font Helvetica is not embedded")
                && run.stderr.contains("is not PDF/A-2B"), "\(run.stderr)")
        let verdict = try Self.check(out)
        #expect(!verdict.passed && verdict.text.contains("no /Metadata stream"), "no false claim: \(verdict.text)")
        #expect(try Run.process("/usr/bin/pdftotext", [out, "-"]).text.contains(TestPDFs.bornDigitalLines[0]))
    }

    @Test("export: documents that came in as PDFs are PDF/A-2B; without Ghostscript the export warns, naming the page, and exits 10")
    func export() throws {
        let farm = FarmHarness()
        _ = farm.folder.write("linn.pdf", try FileSystem.read(try Self.resource("linn.pdf")))
        _ = farm.folder.write("born.pdf", try FileSystem.read(try TestPDFs.bornDigital(folder)))
        let run = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", "linn.pdf", "born.pdf"],
                                  environment: environment, currentDirectory: farm.folder.path)
        #expect(run.status == 0, "\(run.stderr)")
        // The stored page PDFs (the viewer's per-page download): linn's is PDF/A-2B (metadata added in the worker),
        // the born-digital page's stays plain (a worker runs no Ghostscript; the exported document is converted).
        let store = try Store(path: farm.storePath, readOnly: true)
        for page in try store.pages() {
            let stored = try #require(try store.artifact("pdf", of: page.id))
            let path = farm.folder.write("stored-\(page.id.rawValue).pdf", stored)
            let verdict = try Self.check(path)
            let isLinn = try Run.process("/usr/bin/pdftotext", [path, "-"]).text.contains("LinnSequencer")
            #expect(verdict.passed == isLinn, "stored page \(page.id.rawValue): \(verdict.text)")
        }
        let out = farm.folder.file("out")
        let export = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", out, "--format", "pdf"], environment: environment)
        #expect(export.status == 0, "\(export.stderr)")
        for name in ["linn.pdf", "born.pdf"] {
            let verdict = try Self.check(out + "/" + name)
            #expect(verdict.passed, "\(name): \(verdict.text)")
        }
        #expect(try Self.imageStreams(out + "/linn.pdf") == Self.imageStreams(try Self.resource("linn.pdf")))

        var without = environment
        without["OCRFARM_GHOSTSCRIPT"] = folder.file("no-such-gs")
        let plain = farm.folder.file("plain")
        let warned = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", plain, "--format", "pdf"], environment: without)
        #expect(warned.status == 10, "\(warned.stderr)")
        #expect(warned.stderr.contains("'born.pdf'") && warned.stderr.contains("page 1: font Helvetica is not embedded"), "\(warned.stderr)")
        #expect(try Self.check(plain + "/linn.pdf").passed, "linn needs no Ghostscript")
    }
}
