import Crypto
import FarmCoordinator
import FarmCore
import FarmProtocol
import FarmRuntime
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

    @Test("a page file reached through a folder that became a link is sent when it is the same file, not when other content")
    func linkedFolder() throws {
        let rig = try CoordinatorRig()
        let bytes = Array("a page".utf8)
        var other = bytes
        other[0] ^= 1
        try FileSystem.makeDirectory(rig.folder.file("scans"))
        try FileSystem.makeDirectory(rig.folder.file("other"))
        let source = rig.folder.file("scans/page.png")
        try FileSystem.write(bytes, to: source)
        try FileSystem.write(other, to: rig.folder.file("other/page.png"))
        let pages = [NewPage(source: RawPath(source), index: 0, kind: .image, sourceHash: SHA256.hex(bytes), sourceSize: bytes.count)]
        _ = try rig.store.add([NewDocument(name: "page.png", source: RawPath(source), contentHash: SHA256.hex(bytes), priority: 0,
                                           options: PageOptions(), pages: pages),
                               NewDocument(name: "again.png", source: RawPath(source), contentHash: SHA256.hex(bytes) + "-2", priority: 0,
                                           options: PageOptions(), pages: pages)])
        try #require(try rig.store.pages().count == 2)
        // The folder moved and a link to it put in its place (a mount link, merged /usr): the same bytes are sent.
        #expect(rename(rig.folder.file("scans"), rig.folder.file("real")) == 0 && symlink(rig.folder.file("real"), rig.folder.file("scans")) == 0)
        let worker = try rig.worker("w1", slots: 2)
        worker.send(.credit(1))
        let job = try #require(try worker.awaitJobs(1).first)
        #expect(job.bytes == bytes && job.sha256 == SHA256.hex(bytes))
        #expect(try rig.store.pages().filter { $0.state == .leased }.count == 1)
        let left = try #require(try rig.store.pages().first { $0.state == .queued }).id

        // Then swapped for a link to a folder whose page.png is other content: not sent, source-changed.
        #expect(unlink(rig.folder.file("scans")) == 0 && symlink(rig.folder.file("other"), rig.folder.file("scans")) == 0)
        worker.send(.credit(1))
        #expect(try rig.pump { try rig.page(left).state == .failed })
        try worker.collect()
        #expect(worker.jobs.count == 1)
        let failed = try rig.page(left)
        #expect(failed.failureCode == FailureCode.sourceChanged.rawValue)
        #expect(failed.failureMessage?.contains("changed since it was submitted") == true, "\(failed)")
    }
}
