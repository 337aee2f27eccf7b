import Testing
import FarmCore
import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `ocrfarm watch` with real processes, real files, real Tesseract.
@Suite("watch: a watch folder (end to end)", .serialized)
struct WatchCommandTests {
    static let environment = ["OMP_THREAD_LIMIT": "1"]

    static func pages(_ store: String) -> [PageRecord] {
        (try? Store(path: store, readOnly: true).pages()) ?? []
    }

    static func documentCount(_ store: String) -> Int { Set(pages(store).map(\.document)).count }

    static func finished(_ store: String, documents: Int) -> Bool {
        let all = pages(store)
        return Set(all.map(\.document)).count == documents && all.allSatisfy { $0.state == .done || $0.state == .failed }
    }

    @Test("a file copied slowly is read once, complete; editors' temporary files are ignored; a file moved out and back is not read twice")
    func slowCopyTemporaryFilesMoveOutAndBack() throws {
        let farm = FarmHarness()
        let inbox = farm.folder.file("inbox")
        let outside = farm.folder.file("outside")
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let watcher = try BackgroundProcess(Fixtures.binary, ["watch", inbox, "--store", farm.storePath, "--workers", "1", "--quiet", "1"],
                                            logPath: farm.folder.file("watch.out"), environment: Self.environment)
        try #require(FarmHarness.wait(seconds: 60) { watcher.log.contains("watching") }, "\(watcher.log)")

        // A 1 MB TIFF written through one open file in 5 chunks, 1.5 s apart: each pause is longer than the quiet
        // period, so only knowing that the file is still open (written to, not closed) keeps it from being taken.
        let image = try Fixtures.read("tesseract-testdata/phototest.tif")
        let big = image + [UInt8](repeating: 0, count: 1_000_000 - image.count)
        let path = inbox + "/big scan.tif"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let chunk = big.count / 5
        for start in stride(from: 0, to: big.count, by: chunk) {
            try handle.write(contentsOf: Data(big[start..<min(big.count, start + chunk)]))
            usleep(1_500_000)
        }
        try handle.close()
        // Editors' and downloads' temporary files, with page content: never taken.
        let png = TestImages.png(marker: "temporary")
        for name in [".big scan.tif.swp", "scan.png~", "draft.swp", "scan.tif.part", "scan.png.crdownload", "upload.tmp"] {
            farm.folder.write("inbox/\(name)", png)
        }
        // A link dropped in (to a page outside): never followed, named in the log, counted at the end.
        farm.folder.write("outside/linked.png", png)
        #expect(symlink(outside + "/linked.png", inbox + "/linked.png") == 0)

        try #require(FarmHarness.wait(seconds: 180) { Self.finished(farm.storePath, documents: 1) }, "\(watcher.log)")
        var pages = Self.pages(farm.storePath)
        try #require(pages.count == 1, "one document of one page: \(watcher.log)")
        #expect(pages[0].state == .done, "\(watcher.log)")
        #expect(pages[0].attempts == 1, "read once: \(watcher.log)")
        let store = try Store(path: farm.storePath, readOnly: true)
        let text = try store.text(of: pages[0].id) ?? ""
        #expect(text.contains("quick brown"), "the whole page was read: \(text)")
        #expect(watcher.log.components(separatedBy: "took ").count - 1 == 1, "taken once: \(watcher.log)")
        // Taken complete: the document's content hash is the whole file's.
        let digest = try Run.process("/usr/bin/sha256sum", [path]).text.split(separator: " ").first.map(String.init) ?? ""
        #expect(try store.document(withHash: digest)?.id == pages[0].document, "hash of all 1 MB")

        // Out of the folder and back: the same content, so it is known by its hash.
        try FileManager.default.moveItem(atPath: path, toPath: outside + "/big scan.tif")
        usleep(1_500_000)
        try FileManager.default.moveItem(atPath: outside + "/big scan.tif", toPath: path)
        try #require(FarmHarness.wait(seconds: 30) { watcher.log.contains("already submitted") }, "\(watcher.log)")
        usleep(2_000_000)
        pages = Self.pages(farm.storePath)
        #expect(pages.count == 1 && pages[0].attempts == 1, "not read twice: \(watcher.log)")

        #expect(watcher.terminate(waiting: 30) == 0, "\(watcher.log)")
        #expect(watcher.log.contains("took 1 file (1 page), 1 already submitted (not read again)"), "\(watcher.log)")
        // Each temporary name counts once; Foundation writes each file through a hidden temporary of its own too.
        let ignored = watcher.log.split(separator: "\n").last { $0.hasPrefix("watched ") }
            .flatMap { line in line.components(separatedBy: " temporary ignored").first?.split(separator: " ").last }
            .flatMap { Int($0) } ?? 0
        #expect(ignored >= 6, "\(watcher.log)")
        #expect(watcher.log.contains("linked.png left out: a symbolic link"), "\(watcher.log)")
        #expect(watcher.log.contains(", 1 link or special file refused"), "\(watcher.log)")
        #expect(Self.documentCount(farm.storePath) == 1)
    }

    @Test("restarted mid-batch nothing is submitted again; --done-to moves finished files (same tree) without a resubmit")
    func restartAndDoneTo() throws {
        let farm = FarmHarness()
        let inbox = farm.folder.file("inbox")
        let done = farm.folder.file("done")
        try FileManager.default.createDirectory(atPath: inbox + "/box1", withIntermediateDirectories: true)
        let image = try Fixtures.read("tesseract-testdata/phototest.tif")
        for index in 0..<4 { farm.folder.write("inbox/box1/page-\(index).tif", image + Array("copy \(index)".utf8)) }
        let arguments = ["watch", inbox, "--store", farm.storePath, "--workers", "1", "--quiet", "0.5", "--done-to", done]
        let first = try BackgroundProcess(Fixtures.binary, arguments, logPath: farm.folder.file("watch1.out"), environment: Self.environment)
        try #require(FarmHarness.wait(seconds: 180) {
            Self.pages(farm.storePath).contains { $0.state == .done }
        }, "\(first.log)")
        #expect(first.terminate(waiting: 30) == 0, "stops cleanly: \(first.log)")
        #expect(first.log.contains("watched "), "a summary: \(first.log)")
        let afterFirst = Self.pages(farm.storePath)
        #expect(Set(afterFirst.map(\.document)).count == 4, "the four files were taken: \(first.log)")
        #expect(afterFirst.allSatisfy { $0.state != .leased }, "leases given back")
        #expect(afterFirst.contains { $0.state == .queued }, "stopped mid-batch: \(first.log)")

        let second = try BackgroundProcess(Fixtures.binary, arguments, logPath: farm.folder.file("watch2.out"), environment: Self.environment)
        try #require(FarmHarness.wait(seconds: 240) {
            Self.finished(farm.storePath, documents: 4)
                && ((try? FileManager.default.contentsOfDirectory(atPath: done + "/box1"))?.count ?? 0) == 4
        }, "\(second.log)")
        usleep(1_500_000)
        #expect(second.terminate(waiting: 30) == 0, "\(second.log)")
        #expect(second.log.contains("took 0 files"), "nothing submitted again: \(second.log)")
        let pages = Self.pages(farm.storePath)
        #expect(pages.count == 4 && Set(pages.map(\.document)).count == 4, "still four documents")
        #expect(pages.allSatisfy { $0.state == .done }, "\(second.log)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: inbox + "/box1")) ?? []
        #expect(left.isEmpty, "finished files left the watch folder: \(left)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: done + "/box1")) == Set((0..<4).map { "page-\($0).tif" }))
    }
}
