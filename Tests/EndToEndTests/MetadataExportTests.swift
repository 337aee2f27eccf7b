import Testing
import Foundation
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport

/// Issue 36 item 8: a document's stored metadata goes into its exported PDF's `/Info` and XMP, read back with
/// poppler's pdfinfo; the PDF stays PDF/A-2B (`Scripts/check-pdfa`).
@Suite("export: document metadata in /Info and XMP (end to end)", .serialized)
struct MetadataExportTests {
    static func pdfinfo(_ arguments: [String]) throws -> String {
        let path = try #require(Run.which("pdfinfo"), "pdfinfo (poppler-utils) is not installed")
        let out = try Run.process(path, arguments)
        #expect(out.status == 0, "\(out.stderr)")
        return out.text
    }

    @Test("a merged document (PNG) and a PDF laid over (linn.pdf): the fields in /Info and XMP, PDF/A-2B; plain PDFs' /Info too")
    func exported() throws {
        let farm = FarmHarness()
        _ = farm.folder.write("a.png", try FileSystem.read(Fixtures.packageRoot + "/Samples/pages/clean-000.png"))
        _ = farm.folder.write("linn.pdf", try FileSystem.read(try PDFAFromPDFTests.resource("linn.pdf")))
        let run = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", "a.png", "linn.pdf"],
                                  environment: ["OMP_THREAD_LIMIT": "1"], currentDirectory: farm.folder.path)
        #expect(run.status == 0, "\(run.stderr)")
        let store = try Store(path: farm.storePath)
        let documents = try store.documentSummaries(after: nil, limit: 10).map(\.document)
        let scan = try #require(documents.first { $0.name == "a.png" }).id
        let linn = try #require(documents.first { $0.name == "linn.pdf" }).id
        try store.setMetadata(DocumentMetadata(title: "Brief an Bessel (Entwurf)", date: "1829-05-14", creator: "Carl Friedrich Gauß",
                                               identifier: "urn:nbn:de:4711", shelfmark: "Cod. Ms. Gauß Briefe A <12> & 13"), of: scan)
        try store.setMetadata(DocumentMetadata(title: "Linn sequencer manual", creator: "Linn Electronics", shelfmark: "Mus. 9"), of: linn)

        let out = farm.folder.file("out")
        let export = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", out, "--format", "pdf"],
                                     environment: ["OMP_THREAD_LIMIT": "1"])
        #expect(export.status == 0, "\(export.stderr)")
        let scanPDF = out + "/a.pdf", linnPDF = out + "/linn.pdf"
        for pdf in [scanPDF, linnPDF] {
            let verdict = try PDFATests.check(pdf)
            #expect(verdict.passed, "\(pdf): \(verdict.text)")
        }

        let info = try Self.pdfinfo(["-custom", scanPDF])
        for line in ["Title:           Brief an Bessel (Entwurf)", "Author:          Carl Friedrich Gauß", "Date:            1829-05-14",
                     "Identifier:      urn:nbn:de:4711", "Shelfmark:       Cod. Ms. Gauß Briefe A <12> & 13", "Producer:        ocrfarm"] {
            #expect(info.contains(line + "\n"), "\(line): \(info)")
        }
        let xmp = try Self.pdfinfo(["-meta", scanPDF])
        for element in ["<dc:date><rdf:Seq><rdf:li>1829-05-14</rdf:li></rdf:Seq></dc:date>", "<dc:identifier>urn:nbn:de:4711</dc:identifier>",
                        "<dc:source>Cod. Ms. Gauß Briefe A &lt;12&gt; &amp; 13</dc:source>",
                        "<rdf:li>Carl Friedrich Gauß</rdf:li>", "<rdf:li xml:lang=\"x-default\">Brief an Bessel (Entwurf)</rdf:li>"] {
            #expect(xmp.contains(element), "\(element): \(xmp)")
        }

        // The PDF that came in keeps its pages, and gets the stored fields over its own /Info.
        let linnInfo = try Self.pdfinfo(["-custom", linnPDF])
        for line in ["Title:           Linn sequencer manual", "Author:          Linn Electronics", "Shelfmark:       Mus. 9"] {
            #expect(linnInfo.contains(line + "\n"), "\(line): \(linnInfo)")
        }
        #expect(!linnInfo.contains("Identifier:"), "an unset field is left out: \(linnInfo)")
        #expect(try Self.pdfinfo(["-meta", linnPDF]).contains("<dc:source>Mus. 9</dc:source>"))

        // --pdf-type pdf: no XMP, the fields in /Info.
        let plain = farm.folder.file("plain")
        #expect(try Run.ocrfarm(["export", "--store", farm.storePath, "--out", plain, "--format", "pdf", "--pdf-type", "pdf"]).status == 0)
        let plainInfo = try Self.pdfinfo(["-custom", plain + "/a.pdf"])
        #expect(plainInfo.contains("Title:           Brief an Bessel (Entwurf)\n") && plainInfo.contains("Shelfmark:       Cod. Ms. Gauß Briefe A <12> & 13\n"),
                "\(plainInfo)")
        // The PDF that came in, laid over as a plain PDF: a new /Info with the fields, its pages and text kept.
        let plainLinn = try Self.pdfinfo(["-custom", plain + "/linn.pdf"])
        #expect(plainLinn.contains("Title:           Linn sequencer manual\n") && plainLinn.contains("Shelfmark:       Mus. 9\n"), "\(plainLinn)")
        #expect(try Run.process("/usr/bin/pdftotext", [plain + "/linn.pdf", "-"]).text.contains("LinnSequencer"))
    }
}
