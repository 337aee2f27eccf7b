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
}
