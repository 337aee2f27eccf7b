import Testing
import FarmCore
@testable import FarmStore
import SQLite
import TestSupport

@Suite("Store: requeue")
struct RequeueTests {
    let folder = TemporaryDirectory("requeue-test")
    let store: Store
    let worker = WorkerID("w1")
    let other = WorkerID("w2")
    let liveness = WorkerLiveness()
    let policy = RetryPolicy(maxAttempts: 1, baseDelay: 0, jitter: 0)

    init() throws {
        store = try Store(path: folder.file("farm.db"))
    }

    func addPages(_ count: Int, name: String) throws -> [PageID] {
        let pages = (0..<count).map { NewPage(source: RawPath("/data/\(name)-\($0).png"), index: 0, kind: .image) }
        let id = try store.add([NewDocument(name: name, source: RawPath("/data/\(name)"), contentHash: name, priority: 0,
                                            options: PageOptions(), pages: pages)])[0]
        return try store.pages(of: [id]).map(\.id)
    }

    func output(_ text: String) -> PageOutput {
        PageOutput(engine: "test", text: text, meanConfidence: 90, width: 10, height: 10, structure: Array("{}".utf8),
                   timings: #"{"decode":2.5,"recognize":40}"#)
    }

    func attempts(_ page: PageID) throws -> [(Int, String)] {
        try store.connection.prepare("SELECT number, outcome FROM attempts WHERE page_id = ? ORDER BY number")
            .rows([.integer(page.rawValue)]) { ($0.int(0), $0.text(1)) }
    }

    func failPage(_ page: PageID, code: FailureCode, by worker: WorkerID, now: Double = 10) throws {
        let attempt = try #require(try store.write { try store.lease(page, to: worker, now: now, expires: now + 100) })
        let failure = PageFailure(stage: "decode", code: code, message: "bad \(code)")
        _ = try store.write { try store.fail(attempt, by: worker, failure: failure, policy: policy, startedAt: now, now: now) }
    }

    @Test("a stuck page is requeued with its history kept, and the attempt taken back can never add a second result")
    func stuckLeaseIsSuperseded() throws {
        let page = try #require(try addPages(1, name: "a").first)
        try store.write { try store.workerJoined(worker, host: "h", pid: 1, slots: 1, engine: "none", languages: ["eng"], version: "t", now: 0) }
        let first = try #require(try store.write { try store.lease(page, to: worker, now: 1, expires: 10) })
        var stuck = RequeueSelection()
        stuck.stuck = true
        // Before its deadline, with its worker heard from just now, the lease is not stuck.
        #expect(try store.requeueCandidates(stuck, liveness: liveness, now: 2).summary.total == 0)
        try store.write { try store.workersHeard([(worker, 2)]) }
        #expect(try store.requeueCandidates(stuck, liveness: liveness, now: 5).summary.total == 0)
        // Worker silent beyond the window (5 s): stuck, and listed with the worker that holds it.
        let (listed, preview) = try store.requeueCandidates(stuck, liveness: liveness, now: 8)
        #expect(preview.kinds == [.stuck: 1])
        #expect(listed.map(\.worker) == [worker])
        let summary = try store.requeue(stuck, liveness: liveness, now: 8)
        #expect(summary.kinds == [.stuck: 1])
        let counters = try #require(try store.pageCounters(page))
        #expect(counters.state == .queued && counters.attempts == 2 && counters.tries == 0)
        #expect(try attempts(page).map(\.1) == ["interrupted", "requeued"])

        // The old worker reports late, before and after the page is leased again: ignored both times.
        #expect(try store.write { try store.complete(first, by: worker, output: output("old"), startedAt: 1, now: 9) } == false)
        let second = try #require(try store.write { try store.lease(page, to: other, now: 9, expires: 100) })
        #expect(second.number == 3)
        #expect(try store.write { try store.complete(first, by: worker, output: output("old"), startedAt: 1, now: 10) } == false)
        let lost = PageFailure(stage: "dispatch", code: .workerLost, message: "gone", retryable: true)
        #expect(try store.write { try store.fail(first, by: worker, failure: lost, policy: policy, startedAt: 1, now: 10) } == .superseded)
        #expect(try store.write { try store.complete(second, by: other, output: output("new"), startedAt: 9, now: 11) })
        #expect(try store.text(of: page) == "new")
        let results = try store.resultCounts()
        #expect(results.pages == 1 && results.rows == 1)
        #expect(try attempts(page).map(\.1) == ["interrupted", "requeued", "done"])
    }

    @Test("a lease past its deadline is stuck even while its worker is alive")
    func expiredLease() throws {
        let page = try #require(try addPages(1, name: "a").first)
        try store.write { try store.workerJoined(worker, host: "h", pid: 1, slots: 1, engine: "none", languages: ["eng"], version: "t", now: 100) }
        _ = try store.write { try store.lease(page, to: worker, now: 100, expires: 101) }
        var stuck = RequeueSelection()
        stuck.stuck = true
        #expect(try store.requeueCandidates(stuck, liveness: liveness, now: 100.5).summary.total == 0)
        #expect(try store.requeueCandidates(stuck, liveness: liveness, now: 102).summary.kinds == [.stuck: 1])
    }

    @Test("failed pages get fresh tries; filters combine; done pages are never chosen; a dry run changes nothing")
    func failedAndFilters() throws {
        let a = try addPages(3, name: "a")
        let b = try addPages(2, name: "b")
        try failPage(a[0], code: .decodeFailed, by: worker)
        try failPage(a[1], code: .unreadable, by: other)
        try failPage(b[0], code: .decodeFailed, by: other)
        let done = try #require(try store.write { try store.lease(a[2], to: worker, now: 1, expires: 100) })
        try store.write { _ = try store.complete(done, by: worker, output: output("x"), startedAt: 1) }

        var failed = RequeueSelection()
        failed.failed = true
        #expect(try store.requeueCandidates(failed, liveness: liveness).summary.kinds == [.failed: 3])
        var narrow = failed
        narrow.code = "decode-failed"
        #expect(Set(try store.requeueCandidates(narrow, liveness: liveness).listed.map(\.page)) == [a[0], b[0]])
        narrow.documents = [try store.documents(named: "a")[0].id]
        #expect(try store.requeueCandidates(narrow, liveness: liveness).listed.map(\.page) == [a[0]])
        var byWorker = failed
        byWorker.worker = other
        #expect(Set(try store.requeueCandidates(byWorker, liveness: liveness).listed.map(\.page)) == [a[1], b[0]])
        var named = RequeueSelection()
        named.pages = [a[2], a[1]]
        #expect(try store.requeueCandidates(named, liveness: liveness).listed.map(\.page) == [a[1]], "the done page is left alone")

        let before = try store.pages()
        _ = try store.requeueCandidates(failed, liveness: liveness)
        #expect(try store.pages() == before, "listing changes nothing")

        let summary = try store.requeue(narrow, liveness: liveness)
        #expect(summary.total == 1 && summary.codes.map(\.code) == ["decode-failed"])
        let counters = try #require(try store.pageCounters(a[0]))
        #expect(counters.state == .queued && counters.attempts == 2 && counters.tries == 0)
        #expect(try attempts(a[0]).map(\.1) == ["failed", "requeued"])
        #expect(try store.pageCounters(b[0])?.state == .failed)
        #expect(try store.queuedPages(limit: 10).contains { $0.id == a[0] }, "due at once")
        // Its fresh try can fail it for good again, with the same policy.
        let retry = try #require(try store.write { try store.lease(a[0], to: worker, now: 20, expires: 100) })
        #expect(retry.number == 3)
    }

    @Test("pages waiting out a backoff are chosen only when no kind is given")
    func waitingPages() throws {
        let page = try #require(try addPages(1, name: "a").first)
        let attempt = try #require(try store.write { try store.lease(page, to: worker, now: 1, expires: 100) })
        let failure = PageFailure(stage: "decode", code: .unreadable, message: "EIO", retryable: true)
        _ = try store.write {
            try store.fail(attempt, by: worker, failure: failure, policy: RetryPolicy(maxAttempts: 3, baseDelay: 1000, jitter: 0),
                           startedAt: 1, now: 1)
        }
        var byCode = RequeueSelection()
        byCode.code = "unreadable"
        #expect(try store.requeueCandidates(byCode, liveness: liveness, now: 2).summary.kinds == [.waiting: 1])
        var failed = byCode
        failed.failed = true
        #expect(try store.requeueCandidates(failed, liveness: liveness, now: 2).summary.total == 0)
        try store.requeue(byCode, liveness: liveness, now: 2)
        #expect(try store.queuedPages(limit: 1, now: 2).map(\.id) == [page])
    }
}
