import Testing
import Foundation
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport

/// Issue 18 item 14: a page that fails for good does not leave a hole in its document's PDF.
///
/// A 3-page TIFF (Tests/Fixtures/volume/three-pages.tif: phototest, phototest, eurotext) is read by `ocrfarm run`
/// with the real engine in real worker processes; the test trigger aborts the worker on every try at page 2, so it
/// fails for good (`worker-lost`, as a worker killed for memory would). `ocrfarm export` then writes a 3-page PDF:
/// pages 1 and 3 with their text, page 2 its image without text; after the source file is changed, page 2 is a
/// placeholder that says why (found by pdftotext).
@Suite("degraded pages keep their place (end to end)", .serialized)
struct DegradedPageTests {
    static func tool(_ name: String, _ arguments: [String]) throws -> ProcessOutput {
        let path = try #require(Run.which(name), "\(name) is not installed")
        return try Run.process(path, arguments)
    }

    static func pageText(_ pdf: String, _ page: Int) throws -> String {
        try tool("pdftotext", ["-f", String(page), "-l", String(page), pdf, "-"]).text
    }

    static func cer(_ fixture: String, _ text: String) throws -> Double {
        TextMetrics.characterErrorRate(reference: try FileSystem.readText(Fixtures.path("tesseract-testdata/\(fixture).gt.txt")),
                                       hypothesis: text)
    }

    /// The checks every export of the volume must pass: 3 pages in order, qpdf --check clean, 1 and 3 read.
    static func checkVolume(_ pdf: String) throws {
        #expect(try tool("qpdf", ["--show-npages", pdf]).text == "3\n")
        let check = try tool("qpdf", ["--check", pdf])
        #expect(check.status == 0, "\(check.text) \(check.stderr)")
        #expect(try cer("phototest", pageText(pdf, 1)) < 0.1)
        #expect(try cer("eurotext", pageText(pdf, 3)) < 0.15)
    }

    @Test("run with page 2 failing for good; export: 3 pages, page 2 image only; source changed: page 2 a placeholder")
    func volumeKeepsItsPageCount() throws {
        let farm = FarmHarness()
        let volume = farm.folder.write("volume.tif", try Fixtures.read("volume/three-pages.tif"))
        let run = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", "--max-attempts", "2",
                                   "--heartbeat", "200", "--retry-delay", "0.1", "volume.tif"],
                                  environment: ["OCRFARM_TEST_CRASH_ON": "volume.tif page 2", "OMP_THREAD_LIMIT": "1"],
                                  currentDirectory: farm.folder.path)
        #expect(run.status == 65, "\(run.stderr)")
        let store = try Store(path: farm.storePath, readOnly: true)
        let pages = try store.pages().sorted { $0.number < $1.number }
        #expect(pages.map(\.state) == [.done, .failed, .done])
        #expect(pages[1].failureCode == "worker-lost")

        // status counts the degraded page and says how to retry it.
        let status = try Run.ocrfarm(["status", "--store", farm.storePath])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.text.contains("degraded: 1 page failed for good ('volume.tif' 1); export puts them in the PDF without text"),
                "\(status.text)")

        // Export: page 2 is its image with no text.
        let out = farm.folder.file("out")
        let export = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", out])
        #expect(export.status == 65, "\(export.stderr)")
        #expect(export.stderrLines.contains { $0.contains("1 page failed for good, in the PDF without text: page 2 (worker-lost, image only)") },
                "\(export.stderr)")
        #expect(export.text.contains("1 degraded page (failed for good) in the PDFs without text: 1 as their image, 0 as a placeholder"),
                "\(export.text)")
        let pdf = out + "/volume.pdf"
        try Self.checkVolume(pdf)
        #expect(try Self.pageText(pdf, 2).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        let images = try Self.tool("pdfimages", ["-list", pdf]).text.split(separator: "\n").dropFirst(2)
            .map { $0.split(separator: " ") }
        #expect(images.map { $0[0] } == ["1", "2", "3"], "one image per page: \(images)")
        // Page 2 is the source page as it was submitted: phototest, 640 x 480 at 200 dpi.
        #expect(images.count == 3 && images[1][3] == "640" && images[1][4] == "480" && images[1][12] == "200", "\(images)")

        // The source changes after the run: its image is no longer what was submitted, so page 2 says why instead.
        var bytes = try FileSystem.read(volume)
        bytes += Array("appended".utf8)
        _ = farm.folder.write("volume.tif", bytes)
        let changed = farm.folder.file("changed")
        let second = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", changed])
        #expect(second.status == 65, "\(second.stderr)")
        #expect(second.stderrLines.contains { $0.contains("page 2 (worker-lost, placeholder); no image for page 2: \(volume): changed since it was submitted") },
                "\(second.stderr)")
        let placeholderPDF = changed + "/volume.pdf"
        try Self.checkVolume(placeholderPDF)
        let placeholder = try Self.pageText(placeholderPDF, 2).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(placeholder.contains("page 2 of volume.tif could not be read"), "\(placeholder)")
        #expect(placeholder.contains("Page 2 failed for good: worker-lost: worker"), "\(placeholder)")
        #expect(placeholder.contains("changed since it was submitted"), "\(placeholder)")

        // A symbolic link put where the file was is not followed, even to the very content submitted.
        let original = farm.folder.write("original.tif", try Fixtures.read("volume/three-pages.tif"))
        try FileManager.default.removeItem(atPath: volume)
        try FileManager.default.createSymbolicLink(atPath: volume, withDestinationPath: original)
        let linked = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", farm.folder.file("linked"), "--format", "pdf"])
        #expect(linked.stderrLines.contains { $0.contains("no image for page 2: \(volume): is a symbolic link now") }, "\(linked.stderr)")
        try Self.checkVolume(farm.folder.file("linked/volume.pdf"))

        // requeue --failed retries exactly the degraded page.
        let requeue = try Run.ocrfarm(["requeue", "--store", farm.storePath, "--failed", "--dry-run"])
        #expect(requeue.status == 0, "\(requeue.stderr)")
        #expect(requeue.text.contains("would requeue 1 page: 1 failed"), "\(requeue.text)")
        #expect(requeue.text.split(separator: "\n").contains { $0.hasPrefix("  \(pages[1].id.rawValue) ") && $0.contains("worker-lost") },
                "\(requeue.text)")
    }

    @Test("a PDF volume: the failed page is the source's own page (qpdf takes it out of the checked copy)")
    func pdfVolume() throws {
        let farm = FarmHarness()
        let texts = ["Alpha page one", "Bravo page two", "Charlie page three"]
        let parts = texts.enumerated().map { farm.folder.write("part-\($0.offset).pdf", TestPDF.onePage($0.element)) }
        let merge = try Self.tool("qpdf", ["--empty", "--pages"] + parts + ["--", farm.folder.file("book.pdf")])
        #expect(merge.status == 0, "\(merge.stderr)")
        let run = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", "--max-attempts", "1",
                                   "--heartbeat", "200", "book.pdf"],
                                  environment: ["OCRFARM_TEST_CRASH_ON": "book.pdf page 2", "OMP_THREAD_LIMIT": "1"],
                                  currentDirectory: farm.folder.path)
        #expect(run.status == 65, "\(run.stderr)")
        let out = farm.folder.file("out")
        let export = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", out, "--format", "pdf"])
        #expect(export.status == 65, "\(export.stderr)")
        // Page 2 is degraded; page 1 may be too when it was leased to the same worker as it crashed (with
        // --max-attempts 1 that lease's loss fails it for good): as the source's own page it still has its text.
        #expect(export.stderrLines.contains { $0.contains("2 (worker-lost, image only)") }, "\(export.stderr)")
        let pdf = out + "/book.pdf"
        #expect(try Self.tool("qpdf", ["--show-npages", pdf]).text == "3\n")
        #expect(try Self.tool("qpdf", ["--check", pdf]).status == 0)
        for (index, text) in texts.enumerated() {
            let found = try Self.pageText(pdf, index + 1).trimmingCharacters(in: .whitespacesAndNewlines)
            // Pages 1 and 3 are read by Tesseract; page 2 is the source's page, with the text it was made with.
            #expect(TextMetrics.characterErrorRate(reference: text, hypothesis: found) < (index == 1 ? 0.001 : 0.2),
                    "page \(index + 1): '\(found)'")
        }
    }

    @Test("every page of a PDF failed for good: the document is still exported, each page the source's own, in order")
    func allPagesFailed() throws {
        let farm = FarmHarness()
        let texts = ["Alpha page one", "Bravo page two", "Charlie page three"]
        let parts = texts.enumerated().map { farm.folder.write("part-\($0.offset).pdf", TestPDF.onePage($0.element)) }
        #expect(try Self.tool("qpdf", ["--empty", "--pages"] + parts + ["--", farm.folder.file("book.pdf")]).status == 0)
        let run = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", "--max-attempts", "1",
                                   "--heartbeat", "200", "book.pdf"],
                                  environment: ["OCRFARM_TEST_CRASH_ON": "book.pdf page", "OMP_THREAD_LIMIT": "1"],
                                  currentDirectory: farm.folder.path)
        #expect(run.status == 65, "\(run.stderr)")
        let out = farm.folder.file("out")
        let export = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", out])
        #expect(export.status == 65, "\(export.stderr)")
        #expect(export.stderrLines.contains { $0.contains("3 pages failed for good, in the PDF without text: pages 1 (worker-lost, image only), "
            + "2 (worker-lost, image only), 3 (worker-lost, image only)") }, "\(export.stderr)")
        #expect(export.text.hasPrefix("exported 1 document, 0 pages, 1 file into"), "\(export.text)")
        let pdf = out + "/book.pdf"
        #expect(try Self.tool("qpdf", ["--show-npages", pdf]).text == "3\n")
        #expect(try Self.tool("qpdf", ["--check", pdf]).status == 0)
        for (index, text) in texts.enumerated() {
            #expect(try Self.pageText(pdf, index + 1).trimmingCharacters(in: .whitespacesAndNewlines) == text)
        }
    }

    @Test("a damaged page (a truncated PNG) fails for good as decode-failed and is a placeholder that says so")
    func damagedPage() throws {
        let farm = FarmHarness()
        _ = farm.folder.write("a.png", try FileSystem.read(Fixtures.packageRoot + "/Samples/pages/clean-000.png"))
        _ = farm.folder.write("b.png", Array(try Fixtures.read("pdf/two-columns.png").prefix(6000)))
        let run = try Run.ocrfarm(["run", "--store", farm.storePath, "--workers", "1", "--document", "vol", "a.png", "b.png"],
                                  environment: ["OMP_THREAD_LIMIT": "1"], currentDirectory: farm.folder.path)
        #expect(run.status == 65, "\(run.stderr)")
        let out = farm.folder.file("out")
        let export = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", out, "--format", "pdf"])
        #expect(export.stderrLines.contains { $0.contains("page 2 (decode-failed, placeholder); no image for page 2: its image cannot be decoded") },
                "\(export.stderr)")
        let pdf = out + "/vol.pdf"
        #expect(try Self.tool("qpdf", ["--show-npages", pdf]).text == "2\n")
        #expect(try Self.tool("qpdf", ["--check", pdf]).status == 0)
        #expect(try !Self.pageText(pdf, 1).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        let placeholder = try Self.pageText(pdf, 2).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(placeholder.contains("Page 2 failed for good: decode-failed: damaged or truncated png data"), "\(placeholder)")
        #expect(placeholder.contains("Retry it with: ocrfarm requeue --failed --page"), "\(placeholder)")
        // Printed in an archive: the file's name, not the host's folders, and no decoder library messages (issue 36).
        #expect(placeholder.contains("Source: b.png, page 1 of the file"), "\(placeholder)")
        #expect(!placeholder.contains(farm.folder.path) && !placeholder.contains("pixRead"), "\(placeholder)")
    }
}
