import Testing
import Crypto
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The one reader of a page's file (`SourceRef.read`, decision 0088), on real files in a temporary folder.
@Suite("SourceRef: the one reader of a page's file")
struct SourceRefTests {
    let folder = TemporaryDirectory("source-ref")
    let content = Array("the page as it was submitted".utf8)

    func ref(_ path: String, hash: String? = nil, size: Int? = nil) -> SourceRef {
        SourceRef(path: RawPath(path), hash: hash, size: size)
    }

    func problem(_ source: SourceRef, limit: Int = 1 << 20) -> SourceError? {
        do throws(SourceError) {
            _ = try source.read(limit: limit)
            return nil
        } catch {
            return error
        }
    }

    @Test("a file as submitted is read, checked and its hash given; a hard link to it is the same file")
    func readsAndChecks() throws {
        let path = folder.write("page.png", content)
        let read = try ref(path, hash: SHA256.hex(content), size: content.count).read(limit: 1 << 20)
        #expect(read.bytes == content && read.sha256 == SHA256.hex(content) && !read.unchecked)
        let hard = folder.file("hard.png")
        #expect(link(path, hard) == 0)
        #expect(try ref(hard, hash: SHA256.hex(content), size: content.count).read(limit: 1 << 20).bytes == content)
    }

    @Test("a symbolic link where the file was is refused naming it")
    func linkAsTheFile() throws {
        let secret = folder.write("secret.key", content)
        let page = folder.file("page.png")
        #expect(symlink(secret, page) == 0)
        let linked = try #require(problem(ref(page, hash: SHA256.hex(content), size: content.count)))
        #expect(linked.problem == .link && linked.message.contains(page) && linked.message.contains("symbolic link"), "\(linked)")
    }

    @Test("a folder of the path that is a link is followed: the same file reads, other content fails the hash")
    func linkedFolders() throws {
        // The folder moved and a link put in its place, to the very file submitted: read as before (submit keeps
        // paths as typed, so stores submitted through /data -> /mnt/nfs/data must go on reading).
        let real = folder.file("real")
        try FileSystem.makeDirectory(real, mode: 0o700)
        _ = folder.write("real/page.png", content)
        #expect(symlink(real, folder.file("scans")) == 0)
        let read = try ref(folder.file("scans/page.png"), hash: SHA256.hex(content), size: content.count).read(limit: 1 << 20)
        #expect(read.bytes == content && !read.unchecked)
        #expect(problem(ref(folder.path + "/./scans//page.png", hash: SHA256.hex(content), size: content.count)) == nil)

        // Swapped for a link to a folder whose page.png is other content (the same size): the hash refuses it.
        let other = folder.file("other")
        try FileSystem.makeDirectory(other, mode: 0o700)
        var secret = content
        secret[0] ^= 1
        _ = folder.write("other/page.png", secret)
        #expect(unlink(folder.file("scans")) == 0 && symlink(other, folder.file("scans")) == 0)
        let swapped = try #require(problem(ref(folder.file("scans/page.png"), hash: SHA256.hex(content), size: content.count)))
        #expect(swapped.problem == .changed && swapped.message.contains("changed since it was submitted")
                && swapped.message.contains(folder.file("scans/page.png")), "\(swapped)")
    }

    @Test("a FIFO is refused at once, without waiting for a writer; a directory is refused")
    func notRegular() throws {
        let fifo = folder.file("page.png")
        #expect(mkfifo(fifo, 0o600) == 0)
        let start = Date()
        let error = try #require(problem(ref(fifo)))
        #expect(error.problem == .notRegular && error.message.contains(fifo) && error.message.contains("not a regular file"), "\(error)")
        #expect(Date().timeIntervalSince(start) < 2)
        let directory = folder.file("folder.png")
        try FileSystem.makeDirectory(directory, mode: 0o700)
        let dir = try #require(problem(ref(directory)))
        #expect(dir.problem == .notRegular && dir.message.contains("is a directory"), "\(dir)")
    }

    @Test("changed bytes (same size or not), a missing file and one over the limit are refused naming the reason")
    func changedMissingLarge() throws {
        let path = folder.write("page.png", content)
        let hash = SHA256.hex(content)
        var same = content
        same[0] ^= 1
        _ = folder.write("page.png", same)
        let changed = try #require(problem(ref(path, hash: hash, size: content.count)))
        #expect(changed.problem == .changed && changed.message.contains("changed since it was submitted")
                && changed.message.contains(hash) && changed.message.contains(SHA256.hex(same)), "\(changed)")
        _ = folder.write("page.png", content + [1])
        let longer = try #require(problem(ref(path, hash: hash, size: content.count)))
        #expect(longer.problem == .changed && longer.message.contains("\(content.count + 1) bytes now"), "\(longer)")
        let missing = try #require(problem(ref(folder.file("gone.png"), hash: hash, size: content.count)))
        #expect(missing.problem == .missing && missing.message.contains("gone.png"), "\(missing)")
        let large = try #require(problem(ref(path), limit: 4))
        #expect(large.problem == .tooLarge, "\(large)")
    }

    @Test("an old store's page (no hash) is read unchecked once; its hash is recorded and checks every later read")
    func missingHashRecorded() throws {
        let path = folder.write("page.png", content)
        let store = try Store(path: folder.file("farm.db"))
        let pages = [NewPage(source: RawPath(path), index: 0, kind: .image), NewPage(source: RawPath(path), index: 1, kind: .image)]
        let document = try store.add([NewDocument(name: "old", source: RawPath(path), contentHash: "old", priority: 0,
                                                  options: PageOptions(), pages: pages)])[0]
        let ids = try store.pages(of: document, after: 0, limit: 10).map(\.id)
        let source = try #require(try store.source(of: ids[0]))
        #expect(source.hash == nil && source.size == nil)
        let read = try source.read(limit: 1 << 20)
        #expect(read.unchecked && read.sha256 == SHA256.hex(content))
        try store.recordSourceHash(of: source, read: read)
        for id in ids {
            let recorded = try #require(try store.source(of: id))
            #expect(recorded.hash == SHA256.hex(content) && recorded.size == content.count)
        }
        var changed = content
        changed[3] ^= 1
        _ = folder.write("page.png", changed)
        let second = try #require(try store.source(of: ids[1]))
        let error = try #require(problem(second))
        #expect(error.problem == .changed, "\(error)")
    }
}
