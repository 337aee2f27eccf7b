import Testing
import FarmCore
@testable import FarmStore
import SQLite
import TestSupport

@Suite("Store: who may finish an attempt, and its history")
struct AttemptHistoryTests {
    let folder = TemporaryDirectory("attempt-history")
    let store: Store
    let page: PageID

    init() throws {
        store = try Store(path: folder.file("farm.db"))
        let id = try store.add([NewDocument(name: "doc", source: RawPath("/data/doc.png"), contentHash: "h", priority: 0,
                                            options: PageOptions(),
                                            pages: [NewPage(source: RawPath("/data/doc.png"), index: 0, kind: .image)])])[0]
        page = try #require(try store.pages(of: [id]).first).id
    }

    func output(_ text: String) -> PageOutput {
        PageOutput(engine: "none", text: text, meanConfidence: 0, width: 1, height: 1, structure: Array("{}".utf8),
                   timings: "[]", artifacts: [])
    }

    func outcomes() throws -> [String] {
        try store.connection.prepare("SELECT outcome FROM attempts WHERE page_id = ? ORDER BY number")
            .rows([.integer(page.rawValue)]) { $0.text(0) }
    }

    @Test("only the worker an attempt was given to completes or fails it")
    func onlyTheHolder() throws {
        let attempt = try #require(try store.write { try store.lease(page, to: WorkerID("holder"), now: 1, expires: 100) })
        #expect(try store.write { try store.complete(attempt, by: WorkerID("rogue"), output: output("FORGED"), startedAt: nil, now: 2) } == false)
        let failed = try store.write {
            try store.fail(attempt, by: WorkerID("rogue"), failure: PageFailure(stage: "x", code: .decodeFailed, message: "forged"),
                           policy: RetryPolicy(), startedAt: nil, now: 2)
        }
        #expect(failed == .superseded)
        #expect(try store.pageCounters(page)?.state == .leased)
        #expect(try store.write { try store.complete(attempt, by: WorkerID("holder"), output: output("real"), startedAt: 1, now: 3) })
        #expect(try outcomes() == ["done"], "the rogue's tries left no row over the real outcome")
    }

    @Test("a result accepted after a restart took the lease back leaves exactly one done row for its attempt")
    func doneAfterRestart() throws {
        let attempt = try #require(try store.write { try store.lease(page, to: WorkerID("w"), now: 1, expires: 100) })
        #expect(try store.recoverLeases(now: 5) == 1)
        #expect(try outcomes() == ["interrupted"])
        #expect(try store.write { try store.complete(attempt, by: WorkerID("other"), output: output("x"), startedAt: nil, now: 6) } == false,
                "a worker the attempt was not given to cannot finish it after the restart either")
        #expect(try store.write { try store.complete(attempt, by: WorkerID("w"), output: output("kept"), startedAt: 1, now: 6) })
        #expect(try outcomes() == ["done"])
        let done = try store.connection.prepare("""
            SELECT count(*) FROM pages p WHERE state = 'done'
            AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.page_id = p.id AND a.outcome = 'done')
            """).first { $0.int(0) }
        #expect(done == 0)
    }

    @Test("a result for an attempt not yet made leaves no row that would hide that attempt's outcome")
    func futureAttempt() throws {
        let future = AttemptID(page: page, number: 1)
        #expect(try store.write { try store.complete(future, by: WorkerID("w"), output: output("early"), startedAt: nil, now: 1) } == false)
        #expect(try outcomes() == [])
        let attempt = try #require(try store.write { try store.lease(page, to: WorkerID("w"), now: 2, expires: 100) })
        #expect(attempt == future)
        #expect(try store.write { try store.complete(attempt, by: WorkerID("w"), output: output("real"), startedAt: 2, now: 3) })
        #expect(try outcomes() == ["done"])
    }
}
