import Testing
import FarmCore
import FarmRuntime
import FarmStore
import Crypto
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

@Suite("Page image files (issue 37)")
struct PageImageFileTests {
    @Test("/api/pages/N/image never follows a link put where the page's file was, nor waits on a FIFO")
    func swappedFiles() throws {
        let folder = TemporaryDirectory("page-image-file")
        let store = folder.file("farm.db")
        let page = folder.write("page.png", TestImages.png(width: 16, height: 16))
        try #require(try Run.ocrfarm(["submit", "--store", store, page]).status == 0)
        let id = try #require(try Store(path: store, readOnly: true).documents(after: nil, limit: 1).first.map {
            try Store(path: store, readOnly: true).pages(of: $0.id, after: 0, limit: 1).first?.id.rawValue
        } ?? nil)
        let served = try Served(store: store, log: folder.file("serve.log"))
        #expect(try served.call("/api/pages/\(id)/image").status == 200)

        // A link to a secret where the page was: refused, not a byte of the secret sent.
        let secret = folder.write("secret.txt", Array("the coordinator's secret key".utf8))
        #expect(unlink(page) == 0 && symlink(secret, page) == 0)
        let linked = try served.call("/api/pages/\(id)/image")
        #expect(linked.status == 409 && linked.body.contains("symbolic link"), "\(linked.status) \(linked.body)")
        #expect(!linked.body.contains("secret key"))

        // A FIFO: answered at once (opened without waiting for a writer), and the server goes on.
        #expect(unlink(page) == 0 && mkfifo(page, 0o600) == 0)
        let start = Date()
        let fifo = try served.call("/api/pages/\(id)/image")
        #expect(fifo.status == 410, "\(fifo.status) \(fifo.body)")
        #expect(Date().timeIntervalSince(start) < 2)
        #expect(try served.call("/api/status").status == 200)
    }

    /// The page id of the one page of the store at `store`.
    static func onlyPage(_ store: String) throws -> Int64 {
        let opened = try Store(path: store, readOnly: true)
        let document = try #require(try opened.documents(after: nil, limit: 1).first)
        return try #require(try opened.pages(of: document.id, after: 0, limit: 1).first).id.rawValue
    }

    @Test("/api/pages/N/image follows a folder of the path that became a link to the same file; other content there is 409 (decision 0088)")
    func linkedFolder() throws {
        let folder = TemporaryDirectory("page-image-folder")
        let store = folder.file("farm.db")
        try FileSystem.makeDirectory(folder.file("scans"), mode: 0o700)
        try FileSystem.makeDirectory(folder.file("other"), mode: 0o700)
        let page = folder.write("scans/page.png", TestImages.png(width: 16, height: 16))
        _ = folder.write("other/page.png", TestImages.png(width: 24, height: 24))
        try #require(try Run.ocrfarm(["submit", "--store", store, page]).status == 0)
        let id = try Self.onlyPage(store)
        let served = try Served(store: store, log: folder.file("serve.log"))
        #expect(try served.call("/api/pages/\(id)/image").status == 200)

        // The folder moved away and a link to it put in its place (a mount link, merged /usr): still the page.
        #expect(rename(folder.file("scans"), folder.file("elsewhere")) == 0 && symlink(folder.file("elsewhere"), folder.file("scans")) == 0)
        #expect(try served.call("/api/pages/\(id)/image").status == 200)

        // The link swapped for one to a folder whose page.png is another image: no longer the page submitted.
        #expect(unlink(folder.file("scans")) == 0 && symlink(folder.file("other"), folder.file("scans")) == 0)
        let swapped = try served.call("/api/pages/\(id)/image")
        #expect(swapped.status == 409 && swapped.body.contains("changed since it was submitted"), "\(swapped.status) \(swapped.body)")
    }

    @Test("an old store's page without a hash gets one at its first image; a file changed after is refused (decision 0088)")
    func oldStoreHashRecorded() throws {
        let folder = TemporaryDirectory("page-image-old")
        let store = folder.file("farm.db")
        let page = folder.write("page.png", TestImages.png(width: 16, height: 16))
        try #require(try Run.ocrfarm(["submit", "--store", store, page]).status == 0)
        let id = try Self.onlyPage(store)
        // As a store from before hashes were recorded.
        let old = try Run.process("/usr/bin/sqlite3", [store, "UPDATE pages SET source_hash = NULL, source_size = NULL"])
        try #require(old.status == 0, "\(old.stderr)")
        #expect(try Store(path: store, readOnly: true).source(of: PageID(id))?.hash == nil)

        let served = try Served(store: store, log: folder.file("serve.log"))
        #expect(try served.call("/api/pages/\(id)/image").status == 200)
        let recorded = try #require(try Store(path: store, readOnly: true).source(of: PageID(id)))
        #expect(recorded.hash == SHA256.hex(TestImages.png(width: 16, height: 16)) && recorded.size == TestImages.png(width: 16, height: 16).count)

        // Another image put in its place afterwards is no longer the page submitted.
        _ = folder.write("page.png", TestImages.png(width: 24, height: 24))
        let changed = try served.call("/api/pages/\(id)/image")
        #expect(changed.status == 409 && changed.body.contains("changed since it was submitted"), "\(changed.status) \(changed.body)")
    }
}
