import FarmCoordinator
import FarmCore
import FarmProtocol
@testable import FarmStore
import SQLite
import Testing
import TestSupport

/// The coordinator's rules with time driven by hand: nothing here waits for a heartbeat, a lease or a backoff.
@Suite("Coordinator in process, driven clock")
struct CoordinatorTests {
    @Test("credit and prefetch: one page per idle slot, prefetch only while more pages wait than the farm has slots")
    func creditAndPrefetch() throws {
        let rig = try CoordinatorRig()
        try rig.addPages(2)
        let worker = try rig.worker("w1", slots: 1)
        worker.send(.credit(3))
        // Two pages and one slot: the second page is held back, not prefetched behind the busy slot.
        let first = try worker.awaitJobs(1)
        try rig.pump(turns: 20) { false }
        try worker.collect()
        #expect(first.count == 1 && worker.jobs.count == 1)

        // With more pages waiting than the farm has slots, the credit is used in full (one in the slot, two prefetched).
        // (A store that had no more to give is asked again after 200 ms.)
        try rig.addPages(6)
        rig.time.advance(milliseconds: 200)
        let jobs = try worker.awaitJobs(3)
        try rig.pump(turns: 20) { false }
        try worker.collect()
        #expect(jobs.count == 3 && worker.jobs.count == 3, "credit 3 buys exactly 3 jobs")
        #expect(Set(worker.jobs.map(\.attempt.page)).count == 3)
        #expect(worker.jobs.allSatisfy { $0.kind == .image && $0.bytes.starts(with: Array("page ".utf8)) })
        #expect(rig.counters.dispatched == 3)
    }

    @Test("a result is stored once, with its timings as sent; the attempt ends done")
    func resultStored() throws {
        let rig = try CoordinatorRig()
        let pages = try rig.addPages(1)
        let worker = try rig.worker("w1")
        worker.send(.credit(1))
        let job = try #require(try worker.awaitJobs(1).first)
        worker.send(worker.result(job.attempt, text: "hello"))
        #expect(try rig.pump { try rig.page(pages[0]).state == .done })
        #expect(rig.counters.completed == 1)
        let row = try rig.store.connection.prepare("SELECT timings, worker_id FROM results WHERE page_id = ?")
            .first([.integer(pages[0].rawValue)]) { ($0.text(0), $0.text(1)) }
        #expect(row?.0 == #"{"decode":1.3}"#, "\(String(describing: row))")
        #expect(row?.1 == "w1")
        #expect(try outcomes(rig, pages[0]) == [AttemptOutcome.done.rawValue])
    }

    @Test("heartbeat loss: a worker silent for liveness x heartbeat is lost and its page goes back to the queue")
    func heartbeatLoss() throws {
        let rig = try CoordinatorRig()
        let pages = try rig.addPages(1)
        let worker = try rig.worker("w1")
        worker.send(.credit(1))
        _ = try worker.awaitJobs(1)
        // Just inside the limit (3 x 1000 ms): still alive.
        rig.time.advance(milliseconds: 2900)
        try rig.pump(turns: 5) { false }
        #expect(rig.counters.workersLost == 0)
        rig.time.advance(milliseconds: 200)
        #expect(try rig.pump { rig.counters.workersLost == 1 })
        let page = try rig.page(pages[0])
        #expect(page.state == .queued)
        #expect(page.failureCode == FailureCode.workerLost.rawValue)
        #expect(page.failureMessage?.contains("went silent") == true)
        #expect(try outcomes(rig, pages[0]) == [AttemptOutcome.lost.rawValue])
        // The lost worker is a stranger now: whatever it sends is answered with a BYE asking for HELLO.
        worker.send(.heartbeat)
        #expect(try rig.pump { try worker.collect(); return !worker.byes.isEmpty })
        #expect(worker.byes.first?.reason.contains("HELLO") == true)
    }

    @Test("lease expiry: a live worker's lease that runs out is taken back and the page retried")
    func leaseExpiry() throws {
        let rig = try CoordinatorRig { $0.leaseSeconds = 10 }
        let pages = try rig.addPages(1)
        let worker = try rig.worker("w1")
        worker.send(.credit(1))
        _ = try worker.awaitJobs(1)
        // The worker keeps talking (it is alive, just stuck on the page) while 12 s pass.
        for _ in 0..<6 {
            rig.time.advance(milliseconds: 2000)
            worker.send(.heartbeat)
            try rig.pump(turns: 5) { false }
        }
        #expect(try rig.pump { try rig.page(pages[0]).state == .queued })
        #expect(rig.counters.workersLost == 0)
        let page = try rig.page(pages[0])
        #expect(page.failureMessage?.contains("lease ran out after 10 s") == true)
        #expect(page.attempts == 1)
        #expect(rig.counters.retried == 1)
    }

    @Test("a late result (the page has moved on to another attempt) is ignored and counted superseded")
    func lateResult() throws {
        let rig = try CoordinatorRig()
        let pages = try rig.addPages(1)
        let slow = try rig.worker("slow")
        slow.send(.credit(1))
        let first = try #require(try slow.awaitJobs(1).first)
        rig.time.advance(milliseconds: 3100)
        #expect(try rig.pump { rig.counters.workersLost == 1 })
        // The retry's backoff (at most 1.5 s for the first retry) passes; another worker takes attempt 2.
        rig.time.advance(milliseconds: 2000)
        let fast = try rig.worker("fast")
        fast.send(.credit(1))
        let second = try #require(try fast.awaitJobs(1).first)
        #expect(second.attempt == AttemptID(page: pages[0], number: 2))
        // The slow worker comes back and reports attempt 1: too late.
        slow.send(.hello(Hello(worker: slow.id, host: "test", pid: 1, version: "test", slots: 1, languages: ["eng"], engine: "none")))
        slow.send(slow.result(first.attempt, text: "late"))
        #expect(try rig.pump { rig.counters.superseded == 1 })
        #expect(try rig.page(pages[0]).state == .leased)
        fast.send(fast.result(second.attempt, text: "current"))
        #expect(try rig.pump { try rig.page(pages[0]).state == .done })
        let text = try rig.store.connection.prepare("SELECT text FROM results WHERE page_id = ?")
            .first([.integer(pages[0].rawValue)]) { $0.text(0) }
        #expect(text == "current")
        #expect(try outcomes(rig, pages[0]) == [AttemptOutcome.lost.rawValue, AttemptOutcome.done.rawValue])
    }

    // Any connected worker could complete any page with any text (issue 18): a RESULT or FAIL counts only from the
    // connection that holds the page's lease for that attempt.
    @Test("a result or failure for another worker's lease is refused; the holder's own result completes the page")
    func resultForAnotherWorkersLease() throws {
        let rig = try CoordinatorRig()
        let pages = try rig.addPages(1)
        let holder = try rig.worker("holder")
        let other = try rig.worker("other")
        holder.send(.credit(1))
        let job = try #require(try holder.awaitJobs(1).first)
        other.send(other.result(job.attempt, text: "FORGED"))
        other.send(.fail(FailMessage(attempt: job.attempt, failure: PageFailure(stage: "recognize", code: .decodeFailed,
                                                                              message: "forged failure"))))
        #expect(try rig.pump { rig.counters.malformed["not-lease-holder"] == 2 })
        #expect(try rig.page(pages[0]).state == .leased, "the holder's lease stands")
        holder.send(holder.result(job.attempt, text: "from holder"))
        #expect(try rig.pump { try rig.page(pages[0]).state == .done })
        let stored = try rig.store.connection.prepare("SELECT worker_id, text FROM results WHERE page_id = ?")
            .first([.integer(pages[0].rawValue)]) { ($0.text(0), $0.text(1)) }
        #expect(stored?.0 == "holder" && stored?.1 == "from holder")
        #expect(rig.counters.completed == 1 && rig.counters.superseded == 0)
        #expect(try outcomes(rig, pages[0]) == [AttemptOutcome.done.rawValue])
    }

    @Test("a fake PDF or broken XML from the lease holder is not stored: the attempt fails as invalid-result and is retried")
    func invalidRenderings() throws {
        let rig = try CoordinatorRig()
        let pages = try rig.addPages(2)
        let worker = try rig.worker("rogue", slots: 2)
        worker.send(.credit(2))
        let jobs = try worker.awaitJobs(2)
        func result(_ attempt: AttemptID, _ artifacts: [(String, [UInt8])]) -> FarmProtocol.Message {
            .result(ResultMessage(attempt: attempt, engine: "none", meanConfidence: 0, width: 1, height: 1,
                                  timings: [StageTiming(stage: "decode", milliseconds: 1)], text: Array("FORGED".utf8),
                                  structure: Array("{}".utf8), artifacts: artifacts))
        }
        worker.send(result(jobs[0].attempt, [("pdf", Array("%PDF-1.4 fake".utf8))]))
        worker.send(result(jobs[1].attempt, [("hocr", Array("<html><body>".utf8))]))
        #expect(try rig.pump { rig.counters.malformed["invalid-result"] == 2 })
        #expect(try rig.pump { try rig.page(pages[0]).state == .queued && rig.page(pages[1]).state == .queued })
        let stored = try rig.store.connection.prepare("SELECT count(*) FROM results").first { $0.int(0) }
        #expect(stored == 0)
        let codes = try rig.store.connection.prepare("SELECT code FROM attempts ORDER BY page_id").rows { $0.text(0) }
        #expect(codes == ["invalid-result", "invalid-result"])
    }

    @Test("store-write failure: results are held and dispatch pauses; once the store accepts writes, both resume")
    func storeFailureAndResume() throws {
        let rig = try CoordinatorRig(busyTimeoutMilliseconds: 1)
        let pages = try rig.addPages(2)
        let worker = try rig.worker("w1")
        worker.send(.credit(1))
        let job = try #require(try worker.awaitJobs(1).first)

        // Another connection holds the write lock: every commit of the coordinator fails (SQLITE_BUSY).
        let blocker = try Connection(path: rig.folder.file("farm.db"))
        try blocker.execute("BEGIN IMMEDIATE")
        worker.send(worker.result(job.attempt))
        worker.send(.credit(1))
        #expect(try rig.pump { rig.counters.storeErrors >= 1 })
        try rig.pump(turns: 20) { false }
        try worker.collect()
        #expect(worker.jobs.count == 1, "no lease while the store refuses writes")
        #expect(try rig.page(job.attempt.page).state == .leased)
        #expect(rig.counters.completed == 0)

        try blocker.execute("COMMIT")
        // The coordinator tries again a second after the failure.
        try rig.pump(turns: 10) { false }
        #expect(try rig.page(job.attempt.page).state == .leased, "not before the backoff")
        rig.time.advance(milliseconds: 1000)
        #expect(try rig.pump { try rig.page(job.attempt.page).state == .done })
        #expect(rig.counters.completed == 1)
        let jobs = try worker.awaitJobs(2)
        #expect(jobs.count == 2 && jobs[1].attempt.page == pages.first { $0 != job.attempt.page })
    }

    @Test("a worker's BYE gives back the pages it had not started and loses the one in hand")
    func byeReturnsUnstarted() throws {
        let rig = try CoordinatorRig()
        try rig.addPages(4)
        let worker = try rig.worker("w1", slots: 1)
        worker.send(.credit(2))
        let jobs = try worker.awaitJobs(2)
        #expect(jobs.count == 2)
        worker.send(.bye(Bye(reason: "shutdown", returned: [jobs[1].attempt])))
        #expect(try rig.pump { try rig.page(jobs[0].attempt.page).state == .queued && rig.page(jobs[1].attempt.page).state == .queued })
        #expect(try outcomes(rig, jobs[0].attempt.page) == [AttemptOutcome.lost.rawValue])
        #expect(try outcomes(rig, jobs[1].attempt.page) == [AttemptOutcome.returned.rawValue])
        #expect(try rig.page(jobs[1].attempt.page).tries == 0, "a page given back unstarted costs no try")
    }

    private func outcomes(_ rig: CoordinatorRig, _ page: PageID) throws -> [String] {
        try rig.store.connection.prepare("SELECT outcome FROM attempts WHERE page_id = ? ORDER BY number")
            .rows([.integer(page.rawValue)]) { $0.text(0) }
    }
}
