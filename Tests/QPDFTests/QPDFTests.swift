import Testing
import FarmCore
import FarmRuntime
import QPDF
import TestSupport

@Suite("qpdf")
struct QPDFTests {
    let folder = TemporaryDirectory("qpdf-test")

    @Test("merges one-page PDFs into one document in the given order")
    func merge() throws {
        let first = folder.write("first.pdf", TestPDF.onePage("alpha"))
        let second = folder.write("second.pdf", TestPDF.onePage("bravo"))
        let third = folder.write("third.pdf", TestPDF.onePage("charlie"))
        let output = folder.file("merged.pdf")
        try QPDF.merge([second, first, third], into: output)
        #expect(try QPDF.info(output).pageCount == 3)
        let text = try Run.process("/usr/bin/pdftotext", [output, "-"]).text
        let words = text.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        #expect(words == ["bravo", "alpha", "charlie"])
    }

    @Test("a missing or broken input is an error with qpdf's reason, and nothing is printed")
    func errors() throws {
        let good = folder.write("good.pdf", TestPDF.onePage("alpha"))
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
        let path = folder.write("one.pdf", TestPDF.onePage("alpha"))
        let info = try QPDF.info(path)
        #expect(info.pageCount == 1)
        #expect(!info.isEncrypted)
        #expect(QPDF.version.hasPrefix("11."))
    }

    @Test("a PDF that needs a password is told apart by qpdf's error code, not its message")
    func password() throws {
        let plain = folder.write("plain.pdf", TestPDF.onePage("alpha"))
        let locked = folder.file("locked.pdf")
        let qpdf = try #require(Run.which("qpdf"), "the qpdf program makes the encrypted PDF")
        let made = try Run.process(qpdf, ["--encrypt", "user-secret", "owner-secret", "256", "--", plain, locked])
        #expect(made.status == 0)
        let bytes = try FileSystem.read(locked)
        switch Result(catching: { () throws(QPDFError) in try QPDF.info(bytes: bytes, name: "locked.pdf") }) {
        case .failure(let error): #expect(error.kind == .password)
        case .success: Issue.record("an encrypted PDF opened without its password")
        }
        #expect(try QPDF.info(locked, password: "user-secret").isEncrypted)
        let junk = folder.write("junk.pdf", Array("%PDF-1.4 this is not really a pdf".utf8))
        switch Result(catching: { () throws(QPDFError) in try QPDF.info(junk) }) {
        case .failure(let error): #expect(error.kind == .failed)
        case .success: Issue.record("junk opened as a PDF")
        }
    }
}
