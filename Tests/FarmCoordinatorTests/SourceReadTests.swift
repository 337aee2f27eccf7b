import Crypto
import FarmCoordinator
import FarmCore
import FarmProtocol
import FarmStore
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Dispatch reads a page's file through `SourceRef.read` (decision 0088).
@Suite("Dispatch reads page files through the one reader")
struct SourceReadTests {
    @Test("an old store's page (no hash) is sent with its SHA-256, which the store then keeps for every later read")
    func oldStoreHashRecorded() throws {
        let rig = try CoordinatorRig()
        let bytes = Array("an old store's page".utf8)
        let source = rig.folder.file("old.png")
        try FileSystem.write(bytes, to: source)
        _ = try rig.store.add([NewDocument(name: "old.png", source: RawPath(source), contentHash: nil, priority: 0,
                                           options: PageOptions(), pages: [NewPage(source: RawPath(source), index: 0, kind: .image)])])
        let page = try #require(try rig.store.pages().first).id
        #expect(try rig.store.source(of: page)?.hash == nil)
        let worker = try rig.worker("w1", slots: 1)
        worker.send(.credit(1))
        let job = try #require(try worker.awaitJobs(1).first)
        #expect(job.bytes == bytes && job.sha256 == SHA256.hex(bytes))
        let recorded = try #require(try rig.store.source(of: page))
        #expect(recorded.hash == SHA256.hex(bytes) && recorded.size == bytes.count)
    }

    @Test("a page file reached through a folder that is a link now is not sent")
    func linkedFolder() throws {
        let rig = try CoordinatorRig()
        let bytes = Array("a page".utf8)
        try FileSystem.makeDirectory(rig.folder.file("scans"))
        let source = rig.folder.file("scans/page.png")
        try FileSystem.write(bytes, to: source)
        _ = try rig.store.add([NewDocument(name: "page.png", source: RawPath(source), contentHash: SHA256.hex(bytes), priority: 0,
                                           options: PageOptions(),
                                           pages: [NewPage(source: RawPath(source), index: 0, kind: .image,
                                                           sourceHash: SHA256.hex(bytes), sourceSize: bytes.count)])])
        let page = try #require(try rig.store.pages().first).id
        #expect(rename(rig.folder.file("scans"), rig.folder.file("real")) == 0 && symlink(rig.folder.file("real"), rig.folder.file("scans")) == 0)
        let worker = try rig.worker("w1", slots: 1)
        worker.send(.credit(1))
        #expect(try rig.pump { try rig.page(page).state == .failed })
        try worker.collect()
        #expect(worker.jobs.isEmpty)
        let failed = try rig.page(page)
        #expect(failed.failureCode == FailureCode.sourceChanged.rawValue)
        #expect(failed.failureMessage?.contains(rig.folder.file("scans") + " on its path is a symbolic link") == true, "\(failed)")
    }
}
