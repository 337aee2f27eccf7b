import Testing
import FarmCore
import FarmStore
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
}
