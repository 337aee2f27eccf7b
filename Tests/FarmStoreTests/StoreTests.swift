import Testing
import FarmCore
@testable import FarmStore
import SQLite
import TestSupport

@Suite("Store: leases, results, retries")
struct StoreTests {
    let folder = TemporaryDirectory("store-test")
    let store: Store
    let worker = WorkerID("w1")
    let other = WorkerID("w2")

    init() throws {
        store = try Store(path: folder.file("farm.db"))
    }

    func addPages(_ count: Int, priority: Int = 0, name: String = "doc") throws -> DocumentID {
        let pages = (0..<count).map { NewPage(source: RawPath("/data/\(name)-\($0).png"), index: 0, kind: .image) }
        return try store.add([NewDocument(name: name, source: RawPath("/data/\(name)"), contentHash: name,
                                          priority: priority, options: PageOptions(), pages: pages)])[0]
    }

    func output(_ text: String = "hello") -> PageOutput {
        PageOutput(engine: "test", text: text, meanConfidence: 90, width: 10, height: 10, structure: Array("{}".utf8), timings: "{}")
    }

    @Test("pages are queued by priority, then submission order, and a lease hands each out once")
    func queueOrder() throws {
        _ = try addPages(2, priority: 0, name: "low")
        _ = try addPages(2, priority: 5, name: "high")
        let queued = try store.queuedPages(limit: 10)
        #expect(queued.map(\.documentName) == ["high", "high", "low", "low"])
        let attempt = try store.write { try store.lease(queued[0].id, to: worker, now: 1, expires: 100) }
        #expect(attempt == AttemptID(page: queued[0].id, number: 1))
        #expect(try store.write { try store.lease(queued[0].id, to: other, now: 1, expires: 100) } == nil)
        #expect(try store.queuedPages(limit: 10).count == 3)
    }

    @Test("a page read from the queue is leased as the attempt after its last; one that moved on since is left alone")
    func leaseAsRead() throws {
        _ = try addPages(2)
        let read = try store.queuedPages(limit: 10)
        #expect(read.map(\.attempts) == [0, 0])
        let first = try store.write { try store.lease(read[0], to: worker, now: 1, expires: 100) }
        #expect(first == AttemptID(page: read[0].id, number: 1))
        #expect(try store.pageCounters(read[0].id).map { [$0.attempts, $0.tries] } == [1, 1])
        // The same row, read before that lease, is stale now: no second lease of it.
        #expect(try store.write { try store.lease(read[0], to: other, now: 2, expires: 100) } == nil)
        // Another process moves the second page on while the coordinator holds its row (a lease and a give-back
        // through another connection: queued again, one attempt further). The old row leases nothing; a fresh one does.
        let elsewhere = try Store(path: store.path)
        let taken = try #require(try elsewhere.write { try elsewhere.lease(read[1].id, to: other, now: 3, expires: 100) })
        try elsewhere.write { _ = try elsewhere.giveBack(taken, by: other, startedAt: 3, now: 4) }
        #expect(try store.write { try store.lease(read[1], to: worker, now: 5, expires: 100) } == nil)
        #expect(try store.pageCounters(read[1].id)?.state == .queued)
        let fresh = try #require(try store.queuedPages(limit: 10).first { $0.id == read[1].id })
        #expect(fresh.attempts == 1)
        #expect(try store.write { try store.lease(fresh, to: worker, now: 6, expires: 100) } == AttemptID(page: fresh.id, number: 2))
    }

    @Test("a page read again keeps one result row: the new reading replaces it and the earlier goes to the history")
    func readAgain() throws {
        let document = try addPages(1)
        let page = try #require(try store.queuedPages(limit: 1).first)
        let first = try #require(try store.write { try store.lease(page, to: worker, now: 1, expires: 100) })
        #expect(try store.write { try store.complete(first, by: worker, output: output("first"), startedAt: 1, now: 2) })
        try store.reread(document, options: PageOptions(), now: 3)
        let again = try #require(try store.queuedPages(limit: 1).first)
        let second = try #require(try store.write { try store.lease(again, to: worker, now: 4, expires: 100) })
        // reread wrote its own attempt row (number 2, "requeued"): the new reading is attempt 3.
        #expect(second.number == 3 && again.attempts == 2)
        #expect(try store.write { try store.complete(second, by: worker, output: output("second"), startedAt: 4, now: 5) })
        #expect(try store.text(of: page.id) == "second")
        let counts = try store.resultCounts()
        #expect(counts.pages == 1 && counts.rows == 1)
        let readings = try store.readings(of: page.id)
        #expect(readings.map(\.text) == ["first", "second"])
        #expect(readings.map(\.current) == [false, true])
        #expect(readings.first?.replacedAt == 5)
    }

    @Test("exactly one result per page: a second result and a superseded attempt are ignored")
    func exactlyOnce() throws {
        _ = try addPages(1)
        let page = try #require(try store.queuedPages(limit: 1).first)
        let first = try #require(try store.write { try store.lease(page.id, to: worker, now: 1, expires: 100) })
        // The worker is lost; the page is retried on another worker.
        let lost = PageFailure(stage: "dispatch", code: .workerLost, message: "gone", retryable: true)
        let disposition = try store.write {
            try store.fail(first, by: worker, failure: lost, policy: RetryPolicy(baseDelay: 0, jitter: 0), startedAt: 1, now: 5)
        }
        #expect(disposition == .retry(at: 5))
        let second = try #require(try store.write { try store.lease(page.id, to: other, now: 2, expires: 100) })
        #expect(second.number == 2)
        // The lost worker comes back with a result for its old attempt: ignored.
        #expect(try store.write { try store.complete(first, by: worker, output: output("old"), startedAt: 1) } == false)
        #expect(try store.write { try store.complete(second, by: other, output: output("new"), startedAt: 2) } == true)
        #expect(try store.write { try store.complete(second, by: other, output: output("again"), startedAt: 2) } == false)
        #expect(try store.text(of: page.id) == "new")
        let counts = try store.resultCounts()
        #expect(counts.pages == 1 && counts.rows == 1)
        #expect(try store.pageCounters(page.id)?.state == .done)
    }

    @Test("retryable failures come back after a growing backoff until max attempts, then the page fails")
    func retries() throws {
        _ = try addPages(1)
        let page = try #require(try store.queuedPages(limit: 1).first)
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 10, maxDelay: 1000, jitter: 0)
        let timeout = PageFailure(stage: "recognize", code: .timeout, message: "too slow", retryable: true)
        var now = 1000.0
        var waits: [Double] = []
        for _ in 1...3 {
            let attempt = try #require(try store.write { try store.lease(page.id, to: worker, now: now, expires: now + 100) })
            let outcome = try store.write { try store.fail(attempt, by: worker, failure: timeout, policy: policy, startedAt: now, now: now) }
            if case .retry(let at) = outcome {
                waits.append(at - now)
                #expect(try store.queuedPages(limit: 1, now: at - 1).isEmpty)
                now = at
            } else {
                #expect(outcome == .failed)
            }
        }
        #expect(waits == [10, 20])
        let record = try #require(try store.pages().first)
        #expect(record.state == .failed)
        #expect(record.failureCode == "timeout")
        #expect(record.attempts == 3)
    }

    @Test("a non-retryable failure fails the page at once")
    func permanentFailure() throws {
        _ = try addPages(1)
        let page = try #require(try store.queuedPages(limit: 1).first)
        let attempt = try #require(try store.write { try store.lease(page.id, to: worker, now: 1, expires: 100) })
        let broken = PageFailure(stage: "decode", code: .decodeFailed, message: "not an image")
        #expect(try store.write { try store.fail(attempt, by: worker, failure: broken, policy: RetryPolicy(), startedAt: 1) } == .failed)
        #expect(try store.status().failuresByCode.first?.code == "decode-failed")
    }

    @Test("returned jobs and leases recovered after a restart go back without using up a try")
    func returnsAndRecovery() throws {
        _ = try addPages(2)
        let pages = try store.queuedPages(limit: 2)
        let a = try #require(try store.write { try store.lease(pages[0].id, to: worker, now: 1, expires: 100) })
        _ = try #require(try store.write { try store.lease(pages[1].id, to: worker, now: 1, expires: 100) })
        #expect(try store.write { try store.giveBack(a, by: worker, startedAt: 1) })
        #expect(try store.pageCounters(pages[0].id)?.tries == 0)
        #expect(try store.recoverLeases() == 1)
        #expect(try store.pageCounters(pages[1].id)?.state == .queued)
        #expect(try store.pageCounters(pages[1].id)?.tries == 0)
        #expect(try store.queuedPages(limit: 10).count == 2)
    }

    @Test("leases past their deadline are found")
    func expiry() throws {
        _ = try addPages(2)
        let pages = try store.queuedPages(limit: 2)
        _ = try store.write { try store.lease(pages[0].id, to: worker, now: 1, expires: 50) }
        _ = try store.write { try store.lease(pages[1].id, to: worker, now: 1, expires: 500) }
        let expired = try store.expiredLeases(now: 100)
        #expect(expired.map(\.attempt.page) == [pages[0].id])
        #expect(expired.first?.worker == worker)
    }

    @Test("a reader sees a consistent status while a writer holds a transaction")
    func readersDoNotBlock() throws {
        _ = try addPages(3)
        let reader = try Store(path: store.path, readOnly: true)
        try store.connection.execute("BEGIN IMMEDIATE")
        _ = try store.lease(try store.queuedPages(limit: 1)[0].id, to: worker, now: 1, expires: 2)
        let status = try reader.status()
        #expect(status.count(.queued) == 3)
        try store.connection.execute("COMMIT")
        #expect(try reader.status().count(.leased) == 1)
    }

    @Test("a newer schema is refused, and a read-only open of a missing store says so")
    func schemaGuard() throws {
        try store.connection.execute("PRAGMA user_version = 99")
        #expect(throws: StoreError.self) { _ = try Store(path: store.path) }
        do {
            _ = try Store(path: folder.file("missing.db"), readOnly: true)
            Issue.record("missing store should fail")
        } catch let error as StoreError {
            #expect(error.message.contains("no store at"))
        }
    }
}
