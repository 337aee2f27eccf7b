import Testing
import FarmCore
import FarmRuntime
import FarmStore
import Leptonica
import TestSupport
import Foundation

/// Issue 37's one-page-per-job drill, short (the full one, 10,000 pages, is `Scripts/drill/page-parts`): a PDF of
/// small pages read by a real worker that reaches the coordinator through a recording relay.
@Suite("One page per JOB: a 200-page PDF (drill)")
struct PagePartsDrillTests {
    static let pages = 200
    /// The restated bound (decision 0084): the bytes on the wire from coordinator to worker, per page, at most twice
    /// the page's own share of the file plus this much: qpdf's one-page PDF around the page (about 600 bytes:
    /// catalog, page tree, the shared font's object, xref and trailer), the JOB header (attempt, source, options,
    /// SHA-256: about 400 bytes), ZeroMQ framing and heartbeats.
    static let overheadPerPage = 1024

    @Test("every page is sent as its part: bytes sent within 2x the file + 1 KiB a page; every page done with its text; the export overlays the original")
    func onePagePerJob() throws {
        let farm = FarmHarness()
        let pdf = TestPDF.numbered(Self.pages)
        let path = farm.folder.write("book.pdf", pdf)
        #expect(try farm.submit([path]).status == 0)
        let submitted = try Store(path: farm.storePath, readOnly: true)
        let pages = try submitted.pages()
        #expect(pages.count == Self.pages)
        #expect(try pages.allSatisfy { try submitted.part(of: $0.id) != nil }, "every page has its part")

        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port)
        let relay = TCPRelay(to: port)
        _ = try farm.startWorker(port: relay.port, ["--slots", "2"], name: "w1")
        let finished = FarmHarness.wait(seconds: 900) {
            (try? Store(path: farm.storePath, readOnly: true).status().count(.done)) == Self.pages
        }
        #expect(finished, "\(farm.logs.suffix(4000))")
        farm.stopAll()
        relay.stop()

        let sent = relay.bytesFromTarget
        let bound = 2 * pdf.count + Self.overheadPerPage * Self.pages
        print("page-parts drill: file \(pdf.count) bytes, \(Self.pages) pages, sent \(sent) bytes "
              + "(\(sent / Self.pages) a page; bound \(bound); whole file per page would be \(pdf.count * Self.pages))")
        #expect(sent <= bound, "sent \(sent) bytes, bound \(bound)")
        // The old way sent the whole file with every page: 200 x the file.
        #expect(sent < pdf.count * Self.pages / 20)

        let store = try Store(path: farm.storePath, readOnly: true)
        var wrong: [String] = []
        for page in try store.pages() {
            let text = (try store.text(of: page.id) ?? "").split(whereSeparator: \.isWhitespace).joined(separator: " ")
            if !text.contains("Page \(page.number) of \(Self.pages)") { wrong.append("page \(page.number): \(text)") }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(10))")
        // Every part went with its page; the folder with the last of them.
        #expect(((try? FileSystem.entries(farm.storePath + ".pages")) ?? []).isEmpty)

        // The export is the original PDF with the text added, not a merge of the pages.
        let out = farm.folder.file("out")
        let export = try Run.ocrfarm(["export", "--store", farm.storePath, "--out", out, "--format", "pdf", "--pdf-type", "pdf"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(!export.stderr.contains("merged from the stored pages"), "\(export.stderr)")
    }

    @Test("a multi-frame TIFF: each JOB carries its frame alone, within 2x the file + 1 KiB a frame; every frame read")
    func oneFramePerJob() throws {
        let farm = FarmHarness()
        let page = try Pix(contentsOfFile: Fixtures.phototest)
        let frames = 4
        let tiff = try Pix.multipageTIFF([Pix](repeating: page, count: frames))
        let path = farm.folder.write("scans.tif", tiff)
        #expect(try farm.submit([path]).status == 0)
        let submitted = try Store(path: farm.storePath, readOnly: true)
        #expect(try submitted.pages().allSatisfy { try submitted.part(of: $0.id) != nil && $0.source == RawPath(path) })

        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port)
        let relay = TCPRelay(to: port)
        _ = try farm.startWorker(port: relay.port, ["--slots", "1"], name: "w1")
        let finished = FarmHarness.wait(seconds: 300) {
            (try? Store(path: farm.storePath, readOnly: true).status().count(.done)) == frames
        }
        #expect(finished, "\(farm.logs.suffix(4000))")
        farm.stopAll()
        relay.stop()
        let sent = relay.bytesFromTarget
        print("page-parts drill (TIFF): file \(tiff.count) bytes, \(frames) frames, sent \(sent) bytes")
        #expect(sent <= 2 * tiff.count + Self.overheadPerPage * frames, "sent \(sent) bytes of a \(tiff.count)-byte file")
        // The old way sent the whole file with every frame.
        #expect(sent < tiff.count * frames / 2)
        let store = try Store(path: farm.storePath, readOnly: true)
        #expect(try store.pages().allSatisfy { (try store.text(of: $0.id) ?? "").contains("quick brown") })
    }
}
