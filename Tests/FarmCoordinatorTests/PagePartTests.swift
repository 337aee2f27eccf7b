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

/// A page of a multi-page file travels as its part alone (issue 37, decision 0084), checked like any page file.
@Suite("Page parts: one page per JOB")
struct PagePartTests {
    /// A 3-page "file" of 30,000 bytes and a part per page in the store's page folder; returns the pages, the
    /// whole file and the parts' paths.
    func addDocument(_ rig: CoordinatorRig) throws -> (pages: [PageID], whole: [UInt8], parts: [String]) {
        let whole = [UInt8](repeating: UInt8(ascii: "w"), count: 30_000)
        let source = rig.folder.file("book.pdf")
        try FileSystem.write(whole, to: source)
        let folder = rig.store.path + ".pages/book"
        try FileSystem.makeDirectory(folder)
        var pages: [NewPage] = []
        var parts: [String] = []
        for index in 0..<3 {
            let bytes = Array("part \(index + 1) of the book".utf8)
            let path = folder + "/page-\(index + 1).pdf"
            try FileSystem.write(bytes, to: path)
            parts.append(path)
            pages.append(NewPage(source: RawPath(source), index: index, kind: .pdf, sourceHash: SHA256.hex(whole),
                                 sourceSize: whole.count,
                                 part: PagePart(path: RawPath(path), sha256: SHA256.hex(bytes), size: bytes.count)))
        }
        _ = try rig.store.add([NewDocument(name: "book.pdf", source: RawPath(source), contentHash: SHA256.hex(whole),
                                           priority: 0, options: PageOptions(), pages: pages)])
        return (try rig.store.pages().map(\.id), whole, parts)
    }

    @Test("a page with a part is sent as that part alone, with its SHA-256; done, the part and then its folder go")
    func sentAsPart() throws {
        let rig = try CoordinatorRig()
        let (pages, _, parts) = try addDocument(rig)
        let worker = try rig.worker("w1", slots: 3)
        worker.send(.credit(3))
        let jobs = try worker.awaitJobs(3)
        #expect(jobs.count == 3)
        for job in jobs {
            let number = try #require(pages.firstIndex(of: job.attempt.page))
            let part = try FileSystem.read(parts[number])
            #expect(job.bytes == part, "page \(number + 1) carries its part, not the 30,000-byte file")
            #expect(job.index == 0 && job.kind == .pdf)
            #expect(job.sha256 == SHA256.hex(part))
        }
        #expect(rig.counters.jobBytes == parts.reduce(0) { $0 + ((try? FileSystem.read($1).count) ?? 0) })
        #expect(rig.counters.jobBytes < 100)
        // The page itself still names the file as submitted (export and the viewer read it).
        #expect(try rig.store.source(of: pages[0])?.path == RawPath(rig.folder.file("book.pdf")))

        worker.send(worker.result(jobs[0].attempt))
        #expect(try rig.pump { try rig.page(jobs[0].attempt.page).state == .done })
        let first = try #require(pages.firstIndex(of: jobs[0].attempt.page))
        #expect(!FileSystem.exists(parts[first]), "a done page's part is removed")
        #expect(try rig.store.part(of: jobs[0].attempt.page) == nil)
        #expect(FileSystem.isDirectory(rig.store.path + ".pages/book"), "the other pages' parts stay")
        for job in jobs.dropFirst() { worker.send(worker.result(job.attempt)) }
        #expect(try rig.pump { try rig.store.pages().allSatisfy { $0.state == .done } })
        #expect(!FileSystem.exists(rig.store.path + ".pages/book"), "the folder goes with its last part")
    }

    @Test("a changed part fails as source-changed and a linked one is not followed; nothing is sent for either")
    func checkedLikeAFile() throws {
        let rig = try CoordinatorRig()
        let (pages, _, parts) = try addDocument(rig)
        try FileSystem.write(Array("another part 1 of the book".utf8), to: parts[0])
        unlink(parts[1])
        symlink(rig.folder.file("book.pdf"), parts[1])
        let worker = try rig.worker("w1", slots: 3)
        worker.send(.credit(3))
        #expect(try rig.pump { try rig.page(pages[0]).state == .failed && rig.page(pages[1]).state == .failed })
        try worker.collect()
        #expect(worker.jobs.allSatisfy { $0.attempt.page == pages[2] })
        let changed = try rig.page(pages[0]), linked = try rig.page(pages[1])
        #expect(changed.failureCode == FailureCode.sourceChanged.rawValue)
        #expect(changed.failureMessage?.contains(parts[0] + ": changed since it was submitted") == true, "\(changed)")
        #expect(linked.failureCode == FailureCode.sourceChanged.rawValue)
        #expect(linked.failureMessage?.contains("symbolic link") == true, "\(linked)")
    }

    @Test("a part that is gone falls back to the whole file, checked against its hash as before")
    func missingPartSendsTheFile() throws {
        let rig = try CoordinatorRig()
        let (pages, whole, parts) = try addDocument(rig)
        unlink(parts[1])
        let worker = try rig.worker("w1", slots: 3)
        worker.send(.credit(3))
        let jobs = try worker.awaitJobs(3)
        let job = try #require(jobs.first { $0.attempt.page == pages[1] })
        #expect(job.bytes == whole && job.index == 1 && job.sha256 == SHA256.hex(whole))
        // And the whole file changed too: source-changed, as ever.
        let rig2 = try CoordinatorRig()
        let (pages2, _, parts2) = try addDocument(rig2)
        unlink(parts2[0])
        try FileSystem.write(Array("changed".utf8), to: rig2.folder.file("book.pdf"))
        let worker2 = try rig2.worker("w2", slots: 3)
        worker2.send(.credit(3))
        #expect(try rig2.pump { try rig2.page(pages2[0]).state == .failed })
        #expect(try rig2.page(pages2[0]).failureCode == FailureCode.sourceChanged.rawValue)
    }

    /// Sets a file's modification time `seconds` into the past.
    func age(_ path: String, seconds: Double) {
        let then = Int(Clock.now - seconds)
        var times = [timeval(tv_sec: then, tv_usec: 0), timeval(tv_sec: then, tv_usec: 0)]
        #expect(utimes(path, &times) == 0, "utimes \(path)")
    }

    @Test("at start, parts of done pages and old files no row names go; a fresh unnamed file and named ones stay")
    func strayPartsRemovedAtStart() throws {
        let rig = try CoordinatorRig()
        let (pages, _, parts) = try addDocument(rig)
        let worker = WorkerID("gone")
        let output = PageOutput(engine: "t", text: "", meanConfidence: 0, width: 1, height: 1, structure: [], timings: "{}")
        // Page 1 done by a result the coordinator did not send the part for: its row and file stay behind.
        // Page 2 done and its row dropped in the commit, then a kill before the file was removed.
        for page in pages.prefix(2) {
            try rig.store.write {
                let attempt = try #require(try rig.store.lease(page, to: worker, now: 1, expires: 100))
                #expect(try rig.store.complete(attempt, by: worker, output: output, startedAt: 1, now: 2))
            }
        }
        #expect(try rig.store.write { try rig.store.dropPart(of: pages[1]) } == RawPath(parts[1]))
        // Page 3 is queued: its part is named, however old.
        for part in parts { age(part, seconds: 7200) }
        // A submit writing its parts now (no row names them yet), and an old page source kept in the page folder.
        let fresh = rig.store.path + ".pages/fresh/page-1.pdf"
        try FileSystem.makeDirectory(rig.store.path + ".pages/fresh")
        try FileSystem.write(Array("being submitted".utf8), to: fresh)
        let kept = rig.store.path + ".pages/old/page.png"
        try FileSystem.makeDirectory(rig.store.path + ".pages/old")
        try FileSystem.write(Array("a page source".utf8), to: kept)
        age(kept, seconds: 7200)
        _ = try rig.store.add([NewDocument(name: "old.png", source: RawPath(kept), contentHash: "old", priority: 0,
                                           options: PageOptions(), pages: [NewPage(source: RawPath(kept), index: 0, kind: .image)])])

        _ = try CoordinatorRig(folder: rig.folder)
        #expect(!FileSystem.exists(parts[0]), "a done page's part whose row was left")
        #expect(try rig.store.part(of: pages[0]) == nil)
        #expect(!FileSystem.exists(parts[1]), "an old part no row names")
        #expect(FileSystem.exists(parts[2]), "a queued page's part")
        #expect(try rig.store.part(of: pages[2]) != nil)
        #expect(FileSystem.exists(fresh), "a fresh part no row names yet")
        #expect(FileSystem.exists(kept), "a page's source in the page folder")
    }
}
