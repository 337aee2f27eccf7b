import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation

@Suite("Watch folders that stay whole (issue 36)", .serialized)
struct WatchedMoveTests {
    /// Issue 36, item 3: `watch --done-to` moved the files and the store kept the old paths: the viewer answered
    /// 410, IIIF 404, and export merged the PDF from the stored pages with a warning (exit 65), dropping the
    /// source's outline and metadata. Now the store follows each file it moves.
    @Test("watch --done-to: the store follows the moved files; viewer, IIIF and the PDF overlay export find them; a changed file is refused")
    func movedFilesStayWhole() throws {
        let folder = TemporaryDirectory("watched-move")
        let inbox = folder.file("inbox"), done = folder.file("done"), store = folder.file("farm.db")
        try FileManager.default.createDirectory(atPath: inbox + "/box", withIntermediateDirectories: true)
        try FileSystem.write(TestPDF.onePage("Moved along with the store"), to: inbox + "/box/letter.pdf")
        try FileSystem.write(try Fixtures.read("tesseract-testdata/phototest.tif"), to: inbox + "/box/photo.tif")
        let watcher = try BackgroundProcess(Fixtures.binary, ["watch", inbox, "--store", store, "--workers", "1", "--quiet", "0.5",
                                                              "--done-to", done],
                                            logPath: folder.file("watch.out"), environment: ["OMP_THREAD_LIMIT": "1"])
        let moved = FarmHarness.wait(seconds: 120) {
            Set((try? FileManager.default.contentsOfDirectory(atPath: done + "/box")) ?? []) == ["letter.pdf", "photo.tif"]
        }
        #expect(watcher.terminate(waiting: 30) == 0, "\(watcher.log)")
        try #require(moved, "both files moved to the done folder: \(watcher.log)")
        #expect(!watcher.log.contains("keeps its old path") && !watcher.log.contains("cannot"), "\(watcher.log)")

        // The store names the files where they are now.
        let opened = try Store(path: store, readOnly: true)
        let realDone = try #require(FileSystem.canonicalPath(RawPath(done))).description
        var pages: [String: Int64] = [:]
        for document in try opened.documents(after: nil, limit: 10) {
            let page = try #require(try opened.pages(of: document.id, after: 0, limit: 1).first)
            let source = try #require(try opened.source(of: page.id))
            #expect(source.path.description.hasPrefix(realDone + "/box/"), "\(document.name): \(source.path)")
            #expect(try opened.documents(fromSource: source.path).contains { $0.record.id == document.id }, "the document's source follows too")
            pages[String(document.name.split(separator: "/").last ?? "")] = page.id.rawValue
        }
        let letter = try #require(pages["letter.pdf"]), photo = try #require(pages["photo.tif"])

        // The viewer's image and IIIF's, from the moved files.
        let served = try Served(store: store, log: folder.file("serve.log"))
        for page in [letter, photo] {
            let image = try served.call("/api/pages/\(page)/image")
            #expect(image.status == 200 && browserImageSize(image.data) != nil, "viewer, page \(page): \(image.status) \(image.body.prefix(200))")
            let info = try served.call("/iiif/image/\(page)/info.json")
            #expect(info.status == 200, "IIIF, page \(page): \(info.status) \(info.body.prefix(200))")
        }

        // Export overlays the PDF's text on the moved file itself: no warning, exit 0.
        let out = folder.file("out")
        let export = try Run.ocrfarm(["export", "--store", store, "--out", out])
        #expect(export.status == 0, "export: \(export.status) \(export.stderr)")
        #expect(!export.stderr.contains("instead"), "\(export.stderr)")

        // The hash is still checked where the file now is: a file changed in the done folder is refused.
        try FileSystem.write(try Fixtures.read("tesseract-testdata/eurotext.tif"), to: done + "/box/photo.tif")
        let changed = try served.call("/api/pages/\(photo)/image")
        #expect(changed.status == 409 && changed.body.contains("changed since it was submitted"), "\(changed.status) \(changed.body)")
        #expect(try served.call("/iiif/image/\(photo)/info.json").status == 404)
    }
}
