import Testing
import FarmCore
import FarmIngest
import FarmRuntime
import FarmStore
import Leptonica
import QPDF
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite("Submitting files and folders")
struct SubmissionTests {
    let folder = TemporaryDirectory("submit-test")
    let store: Store
    let png: [UInt8]

    init() throws {
        store = try Store(path: folder.file("farm.db"))
        png = try Pix(contentsOfFile: Fixtures.phototest).scaled(by: 0.25).encoded(as: .png)
    }

    @Test("a folder is read recursively in natural order; content decides the type; each file is a document")
    func folderInNaturalOrder() throws {
        try FileSystem.makeDirectory(folder.file("in/sub"))
        for name in ["page10.png", "page2.png", "page1.png"] { folder.write("in/" + name, png + Array(name.utf8)) }
        folder.write("in/sub/zz.dat", png + [9])  // an image with a misleading name
        folder.write("in/readme.jpg", text: "not an image at all\n")
        folder.write("in/.hidden.png", png)
        let report = try Submission(store: store, options: SubmitOptions()).submit([RawPath(folder.file("in"))])
        let names = report.added.map { FileSystem.baseName($0.name) }
        #expect(names == ["page1.png", "page2.png", "page10.png", "readme.jpg", "zz.dat"])
        #expect(report.invalid.count == 1)
        #expect(report.invalid.first?.failure.message.contains("looks like text") == true)
        let states = try store.pages().map(\.state)
        #expect(states == [.queued, .queued, .queued, .failed, .queued])
    }

    @Test("content hashes are of the whole file, whether it is kept whole (TIFF, PDF) or only its head (others)")
    func hashesOfBigFiles() throws {
        // Both well over the 64 KB head.
        let page = try Pix(contentsOfFile: Fixtures.phototest)
        let pgm = folder.write("big.pgm", try page.grayscale().encoded(as: .pnm))
        // A TIFF compresses phototest to a few KB; bytes after its last directory are read by nobody but the hash.
        let tiff = folder.write("two.tif", try Pix.multipageTIFF([page, page]) + [UInt8](repeating: 0x5A, count: 100_000))
        let report = try Submission(store: store, options: SubmitOptions()).submit([RawPath(pgm), RawPath(tiff)])
        #expect(report.added.map(\.pages) == [1, 2])
        for file in [pgm, tiff] {
            let size = Int(try FileSystem.status(file).size)
            #expect(size > 1 << 16)
            let sha256sum = try Run.process("/usr/bin/sha256sum", [file])
            let hash = String(sha256sum.text.prefix(64))
            #expect(sha256sum.status == 0 && hash.count == 64)
            #expect(try store.document(withHash: hash)?.name == FileSystem.baseName(file), "the document is known by its whole file's hash")
            let queued = try store.queuedPages(limit: 10).filter { $0.source.path.description == file }
            #expect(!queued.isEmpty && queued.allSatisfy { $0.source.hash == hash && $0.source.size == size })
        }
    }

    @Test("the same content submitted again is skipped unless forced")
    func deduplication() throws {
        let path = RawPath(folder.write("a.png", png))
        let copy = RawPath(folder.write("copy-of-a.png", png))
        let first = try Submission(store: store, options: SubmitOptions()).submit([path])
        #expect(first.added.count == 1)
        let again = try Submission(store: store, options: SubmitOptions()).submit([copy])
        #expect(again.added.isEmpty)
        #expect(again.skipped.first?.existing == "a.png", "named by its file name")
        let forced = try Submission(store: store, options: SubmitOptions(force: true)).submit([copy])
        #expect(forced.added.count == 1)
    }

    @Test("a multi-page TIFF gives one page each; --document joins files into one document in order")
    func pagesAndDocuments() throws {
        let page = try Pix(contentsOfFile: Fixtures.phototest)
        let tiff = RawPath(folder.write("three.tif", try Pix.multipageTIFF([page, page, page])))
        let one = RawPath(folder.write("one.png", png))
        let report = try Submission(store: store, options: SubmitOptions(documentName: "box 7")).submit([one, tiff])
        #expect(report.added.count == 1)
        #expect(report.added[0].name == "box 7")
        let pages = try store.pages()
        #expect(pages.map(\.number) == [1, 2, 3, 4])
        #expect(pages.map(\.source) == [one, tiff, tiff, tiff])
    }

    @Test("multi-page files are split into one part per page next to the store; the pages keep the file as submitted")
    func splitting() throws {
        let page = try Pix(contentsOfFile: Fixtures.phototest)
        let tiff = RawPath(folder.write("three.tif", try Pix.multipageTIFF([page, try page.grayscale(), page])))
        let report = try Submission(store: store, options: SubmitOptions()).submit([tiff])
        #expect(report.pages == 3)
        let pages = try store.pages()
        // Export, IIIF and the viewer read the file as submitted: the pages still name it, by index.
        #expect(pages.map(\.source) == [tiff, tiff, tiff])
        #expect(try pages.map { try store.source(of: $0.id)?.index } == [0, 1, 2])
        let parts = try pages.map { try #require(try store.part(of: $0.id)) }
        #expect(parts.allSatisfy { $0.path.description.hasPrefix(store.path + ".pages/") })
        #expect(Set(parts.map(\.path.parent)).count == 1)
        #expect(try parts.allSatisfy { $0.size == (try FileSystem.read($0.path.description)).count && $0.sha256.count == 64 })
        #expect(try Pix(contentsOfFile: parts[1].path.description).width == 640)
        #expect(try Pix(contentsOfFile: parts[0].path.description).hasSamePixels(as: page))
        // A PDF is split with qpdf.
        let onePages = [folder.write("a.pdf", TestPDF.onePage("alpha")), folder.write("b.pdf", TestPDF.onePage("bravo"))]
        try QPDF.merge(onePages, into: folder.file("ab.pdf"))
        let pdf = RawPath(folder.file("ab.pdf"))
        let pdfReport = try Submission(store: store, options: SubmitOptions()).submit([pdf])
        #expect(pdfReport.pages == 2)
        let pdfPages = Array(try store.pages().suffix(2))
        #expect(pdfPages.allSatisfy { $0.source == pdf })
        let pdfParts = try pdfPages.map { try #require(try store.part(of: $0.id)) }
        #expect(pdfParts.allSatisfy { $0.path.description.hasSuffix(".pdf") })
        #expect(try QPDF.info(pdfParts[0].path.description).pageCount == 1)
        // The folder holds the parts only (the copy qpdf split is gone).
        #expect(try FileSystem.entries(pdfParts[0].path.parent.description).count == 2)
        // The same content again (--force) gets parts of its own: deleting one document leaves the other's.
        _ = try Submission(store: store, options: SubmitOptions(force: true)).submit([tiff])
        let againParts = try store.pages().suffix(3).map { try #require(try store.part(of: $0.id)) }
        #expect(Set(againParts.map(\.path.parent)).isDisjoint(with: Set(parts.map(\.path.parent))))
        let deleted = try store.delete([report.added[0].id])
        #expect(deleted.splitFiles == [parts[0].path.parent])
        #expect(try store.part(of: pages[0].id) == nil)
        #expect(try store.part(of: try store.pages().suffix(3).first!.id) == againParts[0])
        // A duplicate that is skipped leaves no parts behind.
        let before = try FileSystem.entries(store.path + ".pages").sorted()
        let skipped = try Submission(store: store, options: SubmitOptions()).submit([pdf])
        #expect(skipped.skipped.count == 1)
        #expect(try FileSystem.entries(store.path + ".pages").sorted() == before)
        // Above the threshold the file is kept whole: its pages are sent in it, by index.
        let whole = try Submission(store: store, options: SubmitOptions(force: true, splitThreshold: 1 << 30)).submit([tiff])
        #expect(whole.pages == 3)
        #expect(try store.pages().suffix(3).allSatisfy { try store.part(of: $0.id) == nil && $0.source == tiff })
    }

    @Test("the store's own files are never submitted, even from the folder that holds it")
    func skipsTheStore() throws {
        folder.write("page.png", png)
        let report = try Submission(store: store, options: SubmitOptions()).submit([RawPath(folder.path)])
        #expect(report.added.map { FileSystem.baseName($0.name) } == ["page.png"])
    }

    @Test("unreadable paths and symlink loops are reported; the rest is still submitted")
    func problems() throws {
        try FileSystem.makeDirectory(folder.file("tree/inner"))
        folder.write("tree/inner/good.png", png)
        symlink("..", folder.file("tree/inner/up"))       // a loop back to tree/
        symlink("self", folder.file("tree/self"))          // a link to itself
        let report = try Submission(store: store, options: SubmitOptions()).submit(
            [RawPath(folder.file("tree")), RawPath(folder.file("missing.png"))])
        #expect(report.added.count == 1)
        let reasons = report.problems.map(\.reason)
        #expect(reasons.contains { $0.contains("loop") })
        #expect(reasons.contains { $0.contains("No such file") })
    }

    @Test("a file that cannot be read is a failed page (unreadable) naming the reason; submitting it again skips it")
    func unreadableFile() throws {
        // /proc/self/mem is a regular file whose first bytes nobody can read (EIO), not even root.
        symlink("/proc/self/mem", folder.file("mem.png"))
        folder.write("good.png", png)
        let paths = [RawPath(folder.file("mem.png")), RawPath(folder.file("good.png"))]
        let report = try Submission(store: store, options: SubmitOptions()).submit(paths)
        #expect(report.added.count == 2)
        #expect(report.problems.isEmpty)
        let failure = try #require(report.invalid.first?.failure)
        #expect(report.invalid.first?.path == paths[0])
        #expect(failure.code == .unreadable)
        #expect(failure.message == "cannot read the file: Input/output error")
        let pages = try store.pages()
        #expect(pages.map(\.state) == [.failed, .queued])
        #expect(pages.first?.failureCode == "unreadable")
        let again = try Submission(store: store, options: SubmitOptions()).submit(paths)
        #expect(again.added.isEmpty)
        #expect(again.invalid.isEmpty)
        #expect(again.skipped.map(\.id) == report.added.map(\.id))
    }

    @Test("file names with spaces, newlines and bytes that are not UTF-8 are kept exactly")
    func oddNames() throws {
        let name: [UInt8] = Array("odd name\n".utf8) + [0xFF, 0xFE] + Array(".png".utf8)
        try FileSystem.makeDirectory(folder.file("odd"))
        let path = RawPath(folder.file("odd")).appending(name)
        let fd = path.withCString { open($0, O_WRONLY | O_CREAT, 0o644) }
        #expect(fd >= 0)
        _ = png.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        let report = try Submission(store: store, options: SubmitOptions()).submit([RawPath(folder.file("odd"))])
        #expect(report.added.count == 1)
        let stored = try #require(try store.pages().first)
        #expect(stored.source == path)
        #expect(try FileSystem.read(stored.source) == png)
    }
}
