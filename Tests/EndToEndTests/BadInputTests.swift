import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `ocrfarm run` over the corpus `Scripts/make-bad-inputs` writes, mixed with 20 good pages, with real Tesseract.
@Suite("Bad input (end to end)", .serialized)
struct BadInputTests {
    /// What one page of the corpus should end as.
    struct Expected {
        let name: String
        let number: Int
        let state: PageState
        let code: String?
        /// Part of the failure message; for a done page, whether it has text.
        let message: String
        /// The page shows `truth` (true), no text (false), or text not checked (nil).
        let text: Bool?

        static func failed(_ name: String, page: Int = 1, _ code: String, _ message: String) -> Expected {
            Expected(name: name, number: page, state: .failed, code: code, message: message, text: false)
        }

        static func done(_ name: String, page: Int = 1, text: Bool? = true) -> Expected {
            Expected(name: name, number: page, state: .done, code: nil, message: "", text: text)
        }
    }

    /// The text of Tests/Fixtures/formats/page.pnm, which every page of the corpus with text shows.
    static let truth = "This is a lot of 12 point text to test the ocr code and see if it works on all types of file format."

    /// Names are as `status` shows them: relative to the corpus, newlines and bytes that are not UTF-8 escaped.
    static func expectations(encrypted: Bool, unreadable: Bool) -> [Expected] {
        var rows: [Expected] = [
            .failed("empty.png", "decode-failed", "empty file (0 bytes)"),
            .failed("truncated.png", "decode-failed", "damaged or truncated png data"),
            // The rows before the cut are read (a photo of a letter: its text is not `truth`), the rest is white.
            .done("truncated.jpg", text: nil),
            .failed("truncated-in-header.jpg", "decode-failed", "damaged or truncated jpeg data: no row decodes"),
            .failed("truncated.tif", "decode-failed", "damaged or truncated tiff data"),
            .failed("text-named.png", "decode-failed", "not an image (looks like text)"),
            .failed("random.png", "decode-failed", "not an image (unknown format)"),
            .failed("bomb.png", "image-too-large", "50000x50000 (2500 MP) is over the limit of 100 MP"),
            .failed("no-pages.pdf", "pdf-failed", "the PDF has no pages"),
            .done("multipage-broken.tif", page: 1),
            .failed("multipage-broken.tif", page: 2, "decode-failed", "damaged or truncated tiff data"),
            .done("multipage-broken.tif", page: 3),
            .failed(#"bad\nname-\xff.png"#, "decode-failed", "not an image"),
            .failed("deleted.png", "source-changed", "deleted.png: the file no longer exists"),
            .failed("replaced.png", "unreadable", "replaced.png: not a regular file"),
            .done("png-named.jpg"),
            .done("one-pixel.png", text: false),
            .done("blank.png", text: false),
            .done("black.png", text: false),
            .done("gray16.png"),
            .done("cmyk.jpg"),
            .done("palette-alpha.png"),
            .done("rgba-alpha.png"),
            .done("name with spaces.png"),
            .done(#"name with\nnewline.png"#),
            .done(#"latin1-\xe9t\xe9.png"#),
            .done("loop/inside.png"),
        ]
        if encrypted { rows.append(.failed("encrypted.pdf", "pdf-encrypted", "the PDF is encrypted and needs a password")) }
        if unreadable { rows.append(.failed("unreadable.png", "unreadable", "cannot read the file: Permission denied")) }
        for index in 0..<20 { rows.append(.done(String(format: "good/good-%02d.png", index))) }
        return rows
    }

    @Test("run over the bad-input corpus and 20 good pages: good pages done, each bad one failed with its code; exit 65; status groups them")
    func corpus() throws {
        let folder = TemporaryDirectory("ocrfarm-badinput")
        let corpus = folder.file("in")
        let storePath = folder.file("farm.db")
        let made = try Run.process("/usr/bin/env", ["python3", Fixtures.packageRoot + "/Scripts/make-bad-inputs", "--good", "20", corpus])
        try #require(made.status == 0, "\(made.stderr)")
        let encrypted = FileManager.default.fileExists(atPath: corpus + "/encrypted.pdf")

        // chmod 000 keeps nobody out but root; root is kept out by running ocrfarm without the capabilities that
        // override file permissions (its workers inherit that). Without setpriv, root reads the file: leave it out.
        var prefix = ["/usr/bin/timeout", "-s", "KILL", "300"]
        var unreadable = true
        if getuid() == 0 {
            if let setpriv = Run.which("setpriv") {
                prefix += [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--"]
            } else {
                try FileManager.default.removeItem(atPath: corpus + "/unreadable.png")
                unreadable = false
            }
        }
        func ocrfarm(_ arguments: [String]) throws -> ProcessOutput {
            try Run.process(prefix[0], Array(prefix.dropFirst()) + [Fixtures.binary] + arguments,
                            environment: ["OMP_THREAD_LIMIT": "1"])
        }

        // Submit, then delete a submitted page and put a FIFO in the place of another before any worker asks for them.
        let submitted = try ocrfarm(["submit", "--store", storePath, corpus])
        #expect(submitted.status == 65, "\(submitted.stderr)")
        #expect(submitted.stderr.contains("fifo.png: not a regular file"), "\(submitted.stderr)")
        #expect(submitted.stderr.contains("loop/again: symbolic link loop (the folder contains itself)"), "\(submitted.stderr)")
        #expect(submitted.stderr.contains("loop/a.png: symbolic link loop"), "\(submitted.stderr)")
        #expect(submitted.stderr.contains("loop/b.png: symbolic link loop"), "\(submitted.stderr)")
        try FileManager.default.removeItem(atPath: corpus + "/deleted.png")
        try FileManager.default.removeItem(atPath: corpus + "/replaced.png")
        #expect(mkfifo(corpus + "/replaced.png", 0o644) == 0)

        // The run submits the folder again (all skipped as submitted) and reads what is waiting in the store.
        let started = Date()
        let run = try ocrfarm(["run", "--store", storePath, "--workers", "2", "--retry-delay", "0.1", corpus])
        let seconds = Date().timeIntervalSince(started)
        #expect(run.status == 65, "exit \(run.status) after \(seconds) s: \(run.stderr)")

        let expected = Self.expectations(encrypted: encrypted, unreadable: unreadable)
        let store = try Store(path: storePath, readOnly: true)
        let pages = try store.pages()
        let prefixLength = RawPath(corpus).description.count + 1
        func key(_ page: PageRecord) -> String { "\(String(page.source.description.dropFirst(prefixLength)))#\(page.number)" }
        let byKey = Dictionary(pages.map { (key($0), $0) }, uniquingKeysWith: { first, _ in first })
        // Exactly the expected pages: nothing from the loops or the FIFO, nothing twice.
        #expect(pages.count == expected.count)
        #expect(Set(byKey.keys) == Set(expected.map { "\($0.name)#\($0.number)" }))
        let multiPage = Set(expected.filter { $0.number > 1 }.map(\.name))

        for row in expected {
            guard let page = byKey["\(row.name)#\(row.number)"] else {
                Issue.record("no page \(row.number) of \(row.name) in the store")
                continue
            }
            #expect(page.state == row.state, "\(row.name) page \(row.number): \(page.failureCode ?? "") \(page.failureMessage ?? "")")
            if row.state == .failed {
                #expect(page.failureCode == row.code, "\(row.name): \(page.failureMessage ?? "")")
                #expect(page.failureMessage?.contains(row.message) == true, "\(row.name): \(page.failureMessage ?? "")")
                // The run's summary names the file (and the page of a multi-page file) with the code and reason.
                let named = page.source.description + (multiPage.contains(row.name) ? " page \(row.number)" : "")
                #expect(run.stderr.contains("  \(named): \(row.code ?? ""): \(page.failureMessage ?? "")"), "\(run.stderr)")
            } else {
                let text = try store.text(of: page.id) ?? ""
                if row.text == true {
                    let cer = TextMetrics.characterErrorRate(reference: Self.truth, hypothesis: text)
                    #expect(cer < 0.1, "\(row.name): CER \(cer): \(text)")
                } else if row.text == false {
                    #expect(text.allSatisfy { $0.isWhitespace }, "\(row.name): \(text)")
                }
            }
        }
        // Odd names are stored byte for byte.
        #expect(pages.contains { $0.source.bytes == Array((corpus + "/latin1-").utf8) + [0xE9, 0x74, 0xE9] + Array(".png".utf8) })
        #expect(pages.contains { $0.source.bytes == Array((corpus + "/bad\nname-").utf8) + [0xFF] + Array(".png".utf8) })
        // And never printed raw: no line of output starts inside a name.
        #expect(!run.stderr.contains("\nname-") && !run.stderr.contains("\nnewline.png"))

        // status groups the failures by code, with the same counts in text and JSON.
        var counts: [String: Int] = [:]
        for row in expected where row.state == .failed { counts[row.code!, default: 0] += 1 }
        let status = try Run.ocrfarm(["status", "--store", storePath])
        #expect(status.status == 0)
        #expect(!status.text.contains("bad\nname") && !status.text.contains("name with\nnewline"), "\(status.text)")
        #expect(status.text.contains("done \(expected.count - counts.values.reduce(0, +))   failed \(counts.values.reduce(0, +))"),
                "\(status.text)")
        for (code, count) in counts {
            #expect(status.text.contains("\n  \(code) \(count)   e.g. "), "\(code): \(status.text)")
        }
        let json = try JSON.parse(Array(try Run.ocrfarm(["status", "--store", storePath, "--json"]).stdout))
        let groups = json["failures"]?.arrayValue ?? []
        let reported = Dictionary(uniqueKeysWithValues: groups.compactMap { group -> (String, Int)? in
            guard let code = group["code"]?.stringValue, let count = group["count"]?.intValue else { return nil }
            return (code, count)
        })
        #expect(reported == counts)
        #expect(seconds < 240)
    }

    @Test("with --document over several files, a failed page is named by its page in its own file")
    func combinedDocument() throws {
        let folder = TemporaryDirectory("ocrfarm-badinput-combined")
        let corpus = folder.file("in")
        let made = try Run.process("/usr/bin/env", ["python3", Fixtures.packageRoot + "/Scripts/make-bad-inputs",
                                                    "--no-special", "--good", "2", corpus])
        try #require(made.status == 0, "\(made.stderr)")
        let run = try Run.ocrfarm(["run", "--store", folder.file("farm.db"), "--workers", "1", "--raw", "--outputs", "none",
                                   "--document", "Book", corpus + "/good/good-00.png", corpus + "/good/good-01.png",
                                   corpus + "/multipage-broken.tif"])
        #expect(run.status == 65, "\(run.stderr)")
        // The broken page is the document's 4th page and the TIFF's 2nd.
        #expect(run.stderr.contains("multipage-broken.tif page 2: decode-failed"), "\(run.stderr)")
        #expect(!run.stderr.contains("multipage-broken.tif page 4"), "\(run.stderr)")
    }

    @Test("status never prints a name's control characters raw: C1's CSI and a line separator are shown escaped")
    func controlCharactersInNames() throws {
        let folder = TemporaryDirectory("ocrfarm-badinput-controls")
        let pages = try TestImages.tinyPages(1, in: folder)
        let name = "csi-\u{9B}2J line\u{2028}sep.png"
        try FileManager.default.moveItem(atPath: pages + "/tiny-0.png", toPath: pages + "/" + name)
        let store = folder.file("farm.db")
        // A short document name, so the status table shows it whole.
        #expect(try Run.ocrfarm(["submit", "--store", store, "--document", "c\u{9B}2J\u{2028}s", pages]).status == 0)
        let status = try Run.ocrfarm(["status", "--store", store])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(!status.text.contains("\u{9B}") && !status.text.contains("\u{2028}"), "\(status.text)")
        #expect(status.text.contains("c\\x9B2J\\u2028s "), "\(status.text)")
    }

    @Test("a zone file (.uzn) beside a page is not read: Tesseract would take its zones as the page's layout, and zones off the corrected page aborted the process")
    func zoneFileBesidePage() throws {
        let folder = TemporaryDirectory("uzn")
        for ending in ["tif", "uzn"] {
            try FileSystem.write(try Fixtures.read("tesseract-testdata/8087_054.3B.\(ending)"), to: folder.file("page.\(ending)"))
        }
        let read = try Run.ocrfarm(["ocr", folder.file("page.tif")], environment: ["OMP_THREAD_LIMIT": "1"])
        #expect(read.status == 0, "exit \(read.status): \(read.stderr)")
        let truth = try String(contentsOfFile: Fixtures.path("tesseract-testdata/8087_054.3B.gt.txt"), encoding: .utf8)
        let cer = TextMetrics.characterErrorRate(reference: truth, hypothesis: read.text)
        #expect(cer < 0.12, "CER \(cer)")
    }
}
