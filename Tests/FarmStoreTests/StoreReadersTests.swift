import Testing
import FarmCore
@testable import FarmStore
import TestSupport

@Suite("Store: the reader pool and the rooms' queries")
struct StoreReadersTests {
    let folder = TemporaryDirectory("store-readers-test")
    let store: Store

    init() throws {
        store = try Store(path: folder.file("farm.db"))
    }

    @discardableResult
    func add(_ name: String, pages count: Int = 2) throws -> DocumentID {
        let pages = (0..<count).map { NewPage(source: RawPath("/data/\(name)-\($0).png"), index: 0, kind: .image) }
        return try store.add([NewDocument(name: name, source: RawPath("/data/\(name)"), contentHash: name, priority: 0,
                                          options: PageOptions(), pages: pages)], now: 1000)[0]
    }

    @Test("a read is one snapshot: a write made during it is seen by the next read only")
    func snapshot() throws {
        try add("a")
        let readers = StoreReaders(path: store.path)
        let counts = try readers.read { reader -> (before: Int, after: Int) in
            let before = try reader.documentCount()
            try add("b")
            return (before, try reader.documentCount())
        }
        #expect(counts.before == 1 && counts.after == 1, "the write is not seen inside the read")
        #expect(try readers.read { try $0.documentCount() } == 2)
    }

    @Test("store methods with a read transaction of their own run inside a pooled read")
    func nestedReads() throws {
        let document = try add("a", pages: 3)
        let readers = StoreReaders(path: store.path)
        let (report, page) = try readers.read { reader in (try reader.report(), try reader.pages(of: [document]).first) }
        #expect(report.totalPages == 3)
        #expect(try readers.read { try $0.page(numbered: 2, in: document) } == (page.map { PageID($0.id.rawValue + 1) }))
    }

    @Test("readers are reused, and no more than the pool keeps stay open")
    func kept() throws {
        try add("a")
        let readers = StoreReaders(path: store.path, keptReaders: 1)
        for _ in 0..<3 { _ = try readers.read { try $0.documentCount() } }
        #expect(readers.idleCount == 1)
        // A read inside a read takes a second store; only one is kept after.
        _ = try readers.read { _ in try readers.read { try $0.documentCount() } }
        #expect(readers.idleCount == 1)
        let none = StoreReaders(path: store.path, keptReaders: 0)
        _ = try none.read { try $0.documentCount() }
        #expect(none.idleCount == 0)
    }

    @Test("a missing store is an error naming it, from the first read")
    func missing() {
        let readers = StoreReaders(path: folder.file("none.db"))
        #expect(throws: StoreError.self) { try readers.read { try $0.documentCount() } }
    }

    @Test("tokens: added, found by hash while live, listed, revoked by name or id")
    func tokens() throws {
        #expect(try store.hasTokens)
        #expect(try !store.hasLiveToken())
        let first = try store.addToken(name: "ci", role: .admin, hash: "h1", createdAt: 5)
        let second = try store.addToken(name: "viewer", role: .read, hash: "h2", createdAt: 6)
        #expect(try store.tokenRole(hash: "h1") == .admin && store.tokenRole(hash: "h2") == .read)
        #expect(try store.tokenRole(hash: "h3") == nil)
        #expect(try store.tokens().map(\.name) == ["ci", "viewer"])
        #expect(try store.revokeTokens("ci", at: 7) == 1)
        #expect(try store.revokeTokens(String(second.id), at: 8) == 1)
        #expect(try store.revokeTokens("ci", at: 9) == 0, "already revoked")
        #expect(try store.tokenRole(hash: "h1") == nil && !store.hasLiveToken())
        #expect(try store.tokens() == [TokenRecord(id: first.id, name: "ci", role: .admin, createdAt: 5, revokedAt: 7),
                                       TokenRecord(id: second.id, name: "viewer", role: .read, createdAt: 6, revokedAt: 8)])
    }

    @Test("documents and pages by id; the webhook's newest id and ids after one")
    func documentsAndPages() throws {
        #expect(try store.newestDocumentID() == DocumentID(0))
        let a = try add("a"), b = try add("b", pages: 1), c = try add("c")
        #expect(try store.document(b)?.name == "b" && store.document(DocumentID(c.rawValue + 1)) == nil)
        #expect(try store.newestDocumentID() == c)
        #expect(try store.documentIDs(after: a, limit: 10) == [b, c])
        #expect(try store.documentIDs(after: a, limit: 1) == [b])
        let page = try #require(try store.pages(of: [b]).first)
        #expect(try store.page(page.id) == page)
        #expect(try store.document(of: page.id) == b)
        #expect(try store.page(PageID(99_999)) == nil && store.document(of: PageID(99_999)) == nil)
        #expect(try store.measures(of: page.id) == nil, "no result yet")
        #expect(try store.resultSummary(of: page.id) == nil)
        #expect(try store.finishedPerMinute(0...100_000).isEmpty)
    }
}
