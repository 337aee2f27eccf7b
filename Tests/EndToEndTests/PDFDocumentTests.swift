import Foundation
import FarmCore
import FarmRender
import Testing
import FarmRuntime
import TestSupport

/// A document that came in as one PDF comes out as that PDF with text added (`ocr --format pdf` and `export`),
/// checked with qpdf, poppler and the PDF/A checker.
@Suite("PDF documents kept whole (end to end, real Tesseract, poppler, qpdf and Ghostscript)")
struct PDFDocumentTests {
    let folder = TemporaryDirectory("e2e-pdfdoc")
    let environment: [String: String?] = ["OMP_THREAD_LIMIT": "1"]

    /// Three pages (scan, born-digital text, scan) with an outline, a title and a link on page 1, by Ghostscript's
    /// pdfmark (which also writes XMP metadata).
    func markedPDF() throws -> String {
        let scan = try TestPDFs.scan(folder)
        let text = try TestPDFs.bornDigital(folder)
        let three = folder.file("three.pdf")
        let merge = try Run.process("/usr/bin/qpdf", ["--empty", "--pages", scan.path, text, scan.path, "--", three])
        #expect(merge.status == 0, "\(merge.stderr)")
        let marks = folder.write("marks.ps", text: """
            [ /Title (Harbour report) /Author (ocrfarm tests) /DOCINFO pdfmark
            [ /Title (Chapter one) /Page 1 /OUT pdfmark
            [ /Title (Chapter two) /Page 3 /OUT pdfmark
            [ /SrcPg 1 /Rect [72 72 300 120] /Page 3 /View [/XYZ null null null] /Subtype /Link /ANN pdfmark

            """)
        let marked = folder.file("marked.pdf")
        let gs = try Run.process("/usr/bin/gs", ["-q", "-dNOPAUSE", "-dBATCH", "-sDEVICE=pdfwrite", "-sOutputFile=" + marked, three, marks])
        #expect(gs.status == 0, "\(gs.stderr)")
        return marked
    }

    /// The outline's titles, by `qpdf --json`.
    func outline(_ path: String) throws -> [String] {
        let json = try JSON.parse(Array(try Run.process("/usr/bin/qpdf", ["--json", "--json-key=outlines", path]).stdout))
        return (json["outlines"]?.arrayValue ?? []).compactMap { $0["title"]?.stringValue }
    }

    /// The one PDF an export wrote into `folder`.
    func onlyPDF(in folder: String) throws -> String {
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder).filter { $0.hasSuffix(".pdf") }
        #expect(files.count == 1, "\(files)")
        return folder + "/" + (files.first ?? "none.pdf")
    }

    func pdfinfo(_ path: String, _ arguments: [String] = []) throws -> String {
        try Run.process("/usr/bin/pdfinfo", arguments + [path]).text
    }

    /// `out` is `source` with text added: qpdf finds no fault, the page count, title, author, outline and link are
    /// the source's, and every page has its text (the scans' from OCR, the born-digital page's own). It is PDF/A-2B
    /// (issue 36: its XMP is new, with the source's title and author; its born-digital page's font embedded).
    func expectKept(_ source: String, in out: String, _ what: Comment) throws {
        let check = try Run.process("/usr/bin/qpdf", ["--check", out])
        #expect(check.status == 0, "\(what): \(check.text)")
        let info = try pdfinfo(out)
        #expect(info.contains("Pages:           3") && info.contains("Title:           Harbour report"), "\(what): \(info)")
        let xmp = try pdfinfo(out, ["-meta"])
        #expect(xmp.contains("<pdfaid:part>2</pdfaid:part>") && xmp.contains("Harbour report") && xmp.contains("ocrfarm tests"),
                "\(what): XMP \(xmp)")
        let verdict = try Run.process("/usr/bin/python3", [Fixtures.packageRoot + "/Scripts/check-pdfa", out])
        #expect(verdict.status == 0, "\(what): \(verdict.text)")
        #expect(try outline(out) == ["Chapter one", "Chapter two"], "\(what)")
        let objects = try Run.process("/usr/bin/qpdf", ["--qdf", "--object-streams=disable", out, "-"]).text
        #expect(objects.contains("/Subtype /Link"), "\(what): the link")
        let second = try Run.process("/usr/bin/pdftotext", ["-f", "2", "-l", "2", out, "-"]).text
        #expect(second.contains(TestPDFs.bornDigitalLines[0]), "\(what): \(second)")
        for page in [1, 3] {
            let read = try Run.process("/usr/bin/pdftotext", ["-f", "\(page)", "-l", "\(page)", out, "-"]).text
            #expect(read.split(whereSeparator: \.isWhitespace).count > 50, "\(what): page \(page): \(read.prefix(200))")
        }
    }

    @Test("ocr --format pdf of a PDF gives that PDF with text: pages, outline, /Info, XMP and link kept")
    func ocrKeepsDocument() throws {
        let source = try markedPDF()
        #expect(try outline(source) == ["Chapter one", "Chapter two"], "the fixture has its outline")
        let out = folder.file("marked-ocr.pdf")
        let run = try Run.ocrfarm(["ocr", source, "--format", "pdf", "--out", out, "--jobs", "2"], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        try expectKept(source, in: out, "ocr")
    }

    @Test("export of a PDF document is that PDF with text; changed since submit, it is merged and the export says so")
    func exportKeepsDocument() throws {
        let source = try markedPDF()
        let store = folder.file("farm.db")
        let run = try Run.ocrfarm(["run", "--store", store, "--workers", "1", source], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let exported = folder.file("export")
        let export = try Run.ocrfarm(["export", "--store", store, "--out", exported, "--format", "pdf"], environment: environment)
        #expect(export.status == 0, "\(export.stderr)")
        try expectKept(source, in: try onlyPDF(in: exported), "export")

        // The file changed after submit: not used; the stored pages are merged (with object streams), and a
        // warning says why.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: source))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\n%changed\n".utf8))
        try handle.close()
        let again = folder.file("export-again")
        let merged = try Run.ocrfarm(["export", "--store", store, "--out", again, "--format", "pdf"], environment: environment)
        #expect(merged.stderr.contains("changed since it was submitted") && merged.stderr.contains("merged from the stored pages"),
                "\(merged.stderr)")
        let out = try onlyPDF(in: again)
        #expect(try Run.process("/usr/bin/qpdf", ["--check", out]).status == 0)
        #expect(try pdfinfo(out).contains("Pages:           3"))
        #expect(try outline(out).isEmpty)
        #expect(String(decoding: try FileSystem.read(out), as: UTF8.self).contains("/ObjStm"))
    }

    @Test("a two-page PDF/A-2B source keeps its claim through ocr --format pdf")
    func archivedDocument() throws {
        let checker = Fixtures.packageRoot + "/Scripts/check-pdfa"
        let archived = try TestPDFs.scan(folder, name: "archived.pdf", archive: try PDFAProfile.current().get())
        let two = folder.file("archived-two.pdf")
        // qpdf keeps the first file's catalog (XMP, output intent) and takes the pages.
        let merge = try Run.process("/usr/bin/qpdf", ["--newline-before-endstream", archived.path, "--pages", archived.path, archived.path,
                                                      "--", two])
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(try Run.process(checker, [two]).status == 0, "the fixture is PDF/A")
        let out = folder.file("archived-two-ocr.pdf")
        let run = try Run.ocrfarm(["ocr", two, "--format", "pdf", "--out", out, "--jobs", "2"], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let check = try Run.process(checker, [out])
        #expect(check.status == 0, "\(check.text)")
        #expect(try pdfinfo(out).contains("Pages:           2"))
        #expect(try Run.process("/usr/bin/qpdf", ["--check", out]).status == 0)
    }

    @Test("redo on a PDF ocrfarm made from an image replaces its text layer (one layer after, not two)")
    func redoOwnImagePDF() throws {
        let first = folder.file("photo.pdf")
        #expect(try Run.ocrfarm(["ocr", Fixtures.phototest, "--format", "pdf", "--out", first], environment: environment).status == 0)
        let again = folder.file("photo-redo.pdf")
        let run = try Run.ocrfarm(["ocr", first, "--pdf-text", "redo", "--format", "pdf", "--out", again], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        // Of the page's content streams, decoded, one draws text.
        let shown = try Run.process("/usr/bin/qpdf", ["--show-pages", again]).text
        let ids = shown.split(separator: "\n").filter { $0.hasPrefix("    ") && $0.hasSuffix(" R") }
            .compactMap { $0.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) }
        let streams = try ids.map { try Run.process("/usr/bin/qpdf", ["--show-object=\($0)", "--filtered-stream-data", again]).text }
        #expect(streams.filter { $0.contains("BT") }.count == 1, "\(streams.map { $0.prefix(40) })")
        let before = try TestPDFs.words(first).count, after = try TestPDFs.words(again).count
        #expect(before > 20 && abs(after - before) <= before / 20, "\(before) words before, \(after) after")
    }
}
