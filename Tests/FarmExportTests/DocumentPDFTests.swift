import Testing
import FarmCore
import FarmExport
import FarmRuntime
import TestSupport

@Suite("one-page PDFs merged into a document")
struct DocumentPDFTests {
    let folder = TemporaryDirectory("document-pdf")

    @Test("pages are merged in the order they were added, and the page files are gone afterwards")
    func merge() throws {
        let document = DocumentPDF(directory: folder.path, prefix: "d1")
        for word in ["charlie", "alpha", "bravo"] { try document.append(TestPDF.onePage(word)) }
        #expect(document.pageCount == 3)
        let output = folder.file("merged.pdf")
        try document.merge(into: output)
        let text = try Run.process("/usr/bin/pdftotext", [output, "-"]).text
        #expect(text.split(whereSeparator: \.isWhitespace).map(String.init) == ["charlie", "alpha", "bravo"])
        #expect(try FileSystem.entries(folder.path) == ["merged.pdf"])
        #expect(document.pageCount == 0)
    }

    @Test("a single page is moved into place unchanged; no pages is an error; pages not merged are removed")
    func singleAndEmpty() throws {
        let page = TestPDF.onePage("alone")
        let single = DocumentPDF(directory: folder.path, prefix: "one")
        try single.append(page)
        try single.merge(into: folder.file("one.pdf"))
        #expect(try FileSystem.read(folder.file("one.pdf")) == page)
        #expect(throws: DocumentPDFError.self) { try DocumentPDF(directory: folder.path).merge(into: folder.file("none.pdf")) }
        do {
            let abandoned = DocumentPDF(directory: folder.path, prefix: "gone")
            try abandoned.append(page)
        }
        #expect(try FileSystem.entries(folder.path) == ["one.pdf"])
    }

    /// The words of the PDF at `path`, as pdftotext reads them.
    func words(_ path: String) throws -> [String] {
        try Run.process("/usr/bin/pdftotext", [path, "-"]).text.split(whereSeparator: \.isWhitespace).map(String.init)
    }

    @Test("published: the source PDF with the text laid over it when there is one, else the pages merged")
    func publish() throws {
        let source = TestPDF.numbered(2)
        let overlaid = DocumentPDF(directory: folder.path, prefix: "o")
        for word in ["alpha", "bravo"] { try overlaid.append(TestPDF.onePage(word)) }
        var refusals: [String] = []
        let kept = try overlaid.publish(into: folder.file("overlaid.pdf"), source: {
            DocumentPDF.Source(bytes: source, name: "numbered.pdf", replacingEarlier: false, type: .pdf, title: "numbered")
        }, refused: { refusals.append($0) }, metadata: { nil })
        guard case .overlaid = kept else { Issue.record("\(kept)"); return }
        #expect(try words(folder.file("overlaid.pdf")) == ["Page", "1", "of", "2", "Page", "2", "of", "2"])
        #expect(refusals.isEmpty)

        // No source: merged, and nothing said.
        let merged = DocumentPDF(directory: folder.path, prefix: "m")
        for word in ["alpha", "bravo"] { try merged.append(TestPDF.onePage(word)) }
        let made = try merged.publish(into: folder.file("merged.pdf"), source: { nil }, refused: { refusals.append($0) },
                                      metadata: { nil })
        guard case .merged = made else { Issue.record("\(made)"); return }
        #expect(try words(folder.file("merged.pdf")) == ["alpha", "bravo"])
        #expect(refusals.isEmpty)
    }

    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    @Test("a source that cannot be overlaid is said why, before the pages are merged instead; a failing merge throws")
    func publishRefused() throws {
        let document = DocumentPDF(directory: folder.path, prefix: "r")
        for word in ["charlie", "delta"] { try document.append(TestPDF.onePage(word)) }
        var said: [String] = []
        let made = try document.publish(into: folder.file("refused.pdf"), source: {
            throw Refusal(description: "scan.pdf changed since it was submitted")
        }, refused: { said.append("refused: " + $0) }, metadata: {
            said.append("metadata")
            return nil
        })
        guard case .merged = made else { Issue.record("\(made)"); return }
        #expect(said == ["refused: scan.pdf changed since it was submitted", "metadata"])
        #expect(try words(folder.file("refused.pdf")) == ["charlie", "delta"])

        // qpdf cannot read the source: said, and merged.
        let broken = DocumentPDF(directory: folder.path, prefix: "b")
        try broken.append(TestPDF.onePage("echo"))
        said = []
        _ = try broken.publish(into: folder.file("broken.pdf"), source: {
            DocumentPDF.Source(bytes: Array("not a PDF".utf8), name: "broken.pdf", replacingEarlier: false, type: .pdf, title: "")
        }, refused: { said.append($0) }, metadata: { nil })
        #expect(said.count == 1 && said[0].contains("broken.pdf"), "\(said)")
        #expect(try words(folder.file("broken.pdf")) == ["echo"])

        // Nothing to merge: the merge's error.
        #expect(throws: DocumentPDFError.self) {
            try DocumentPDF(directory: folder.path, prefix: "n").publish(into: folder.file("none.pdf"), source: { nil },
                                                                        refused: { _ in }, metadata: { nil })
        }
    }
}
