import Testing
import FarmCore
@testable import FarmStore
import SQLite
import TestSupport

@Suite("Store: search index, search, keywords, backfill")
struct SearchStoreTests {
    let folder = TemporaryDirectory("search-store")
    let worker = WorkerID("w1")

    /// Adds a document whose pages are done with these texts (and keyword lists); returns its page ids in order.
    @discardableResult
    func addDone(_ store: Store, name: String, texts: [String], keywords: [[String]]? = nil) throws -> [PageID] {
        let pages = texts.indices.map { NewPage(source: RawPath("/data/\(name)/\($0).png"), index: 0, kind: .image) }
        let document = try store.add([NewDocument(name: name, source: RawPath("/data/\(name)"), contentHash: nil, priority: 0,
                                                  options: PageOptions(), pages: pages)])[0]
        var ids: [PageID] = []
        for page in try store.pages(of: [document]) {
            let attempt = try #require(try store.write { try store.lease(page.id, to: worker, now: 1, expires: 100) })
            let index = page.number - 1
            let structure = JSON.object([("keywords", .array((keywords?[index] ?? []).map { JSON($0) }))]).rendered
            let output = PageOutput(engine: "test", text: texts[index], meanConfidence: 90, width: 10, height: 10,
                                    structure: Array(structure.utf8), timings: "{}")
            #expect(try store.write { try store.complete(attempt, by: worker, output: output, startedAt: 1) })
            ids.append(page.id)
        }
        return ids
    }

    func search(_ store: Store, _ text: String, documents: [DocumentID]? = nil, limit: Int = 10,
                rankedLimit: Int = Store.rankedSearchLimit) throws -> SearchResults {
        try store.search(try SearchQuery(text), documents: documents, limit: limit, rankedLimit: rankedLimit)
    }

    @Test("a result is indexed when it is stored: words, phrases, prefixes, operators, Chinese substrings")
    func indexedOnComplete() throws {
        let store = try Store(path: folder.file("farm.db"))
        let ids = try addDone(store, name: "mixed", texts: [
            "The quick brown fox jumps over the lazy dog.",
            "A digital clock shows digits; the fox sleeps.",
            "子曰：学而时习之，不亦说乎？有朋自远方来，不亦乐乎？人不知而不愠，不亦君子乎？",
            "Résumé of the café owner",
        ])
        #expect(try search(store, "fox").hits.map(\.page) .sorted() == [ids[0], ids[1]])
        #expect(try search(store, "\"brown fox\"").hits.map(\.page) == [ids[0]])
        #expect(try search(store, "\"fox brown\"").total == 0)
        #expect(try search(store, "digit*").hits.map(\.page) == [ids[1]])
        #expect(try search(store, "fox NOT lazy").hits.map(\.page) == [ids[1]])
        // Written as search engines take it (issue 36: 'fox -dog' found the page with dog).
        #expect(try search(store, "fox -dog").hits.map(\.page) == [ids[1]])
        #expect(try search(store, "lazy OR clock").total == 2)
        #expect(try search(store, "(lazy OR clock) digits").hits.map(\.page) == [ids[1]])
        // Any run of Chinese characters, across the dictionary's word boundaries.
        for query in ["君子", "学而", "而时", "远方来", "不亦说乎", "朋"] {
            #expect(try search(store, query).hits.map(\.page) == [ids[2]], "\(query)")
        }
        #expect(try search(store, "君而").total == 0, "characters that are not next to each other do not match as a phrase")
        // Accents and case are folded.
        #expect(try search(store, "resume CAFE").hits.map(\.page) == [ids[3]])
        let hit = try #require(try search(store, "君子").hits.first)
        #expect(hit.documentName == "mixed" && hit.number == 3 && hit.source == RawPath("/data/mixed/2.png"))
        #expect(hit.snippet.contains("不亦\u{02}君子\u{03}乎"), "\(hit.snippet)")
        #expect(!hit.snippet.contains("\u{200B}"))
    }

    @Test("document names: Greek accents folded as Latin ones are, also in a store indexed before (issue 36)")
    func greekNames() throws {
        let path = folder.file("greek.db")
        let store = try Store(path: path)
        _ = try addDone(store, name: "Επιστολή από την Αθήνα.pdf", texts: ["x"])
        _ = try addDone(store, name: "Brief an Müller.tif", texts: ["x"])
        _ = try addDone(store, name: "Ὀδύσσεια ῥαψῳδία.tif", texts: ["x"])
        func names(_ query: String, in store: Store) throws -> [String] {
            try store.documents(matchingName: try SearchQuery(query), limit: 10).map(\.name)
        }
        for query in ["αθηνα", "ΑΘΗΝΑ", "Αθήνα", "επιστολη αθηνα"] {
            #expect(try names(query, in: store) == ["Επιστολή από την Αθήνα.pdf"], "\(query)")
        }
        #expect(try names("οδυσσεια", in: store) == ["Ὀδύσσεια ῥαψῳδία.tif"], "polytonic breathings and accents")
        #expect(try names("ραψωδια", in: store) == ["Ὀδύσσεια ῥαψῳδία.tif"], "iota subscript")
        #expect(try names("muller", in: store) == ["Brief an Müller.tif"], "Latin as before")

        // A store whose names were indexed as they were written is folded once when next opened for writing.
        let raw = try Connection(path: path)
        try raw.execute("""
            DELETE FROM document_search; INSERT INTO document_search (rowid, name) SELECT id, name FROM documents;
            DELETE FROM coordinator WHERE key = 'names_folded'
            """)
        #expect(try names("αθηνα", in: store).isEmpty, "unfolded, the name is not found without its accents")
        let reopened = try Store(path: path)
        #expect(try names("αθηνα", in: reopened) == ["Επιστολή από την Αθήνα.pdf"])
        #expect(try names("muller", in: reopened) == ["Brief an Müller.tif"])
    }

    @Test("ranked by relevance under the bound; past it in page order, counted only for a single word")
    func rankingBound() throws {
        let store = try Store(path: folder.file("farm.db"))
        let ids = try addDone(store, name: "many", texts: [
            "apple", "apple apple apple banana", "apple banana", "cherry", "apple",
        ])
        let ranked = try search(store, "apple")
        #expect(ranked.order == .relevance && ranked.total == 4)
        #expect(ranked.hits.first?.page == ids[1], "the page with apple three times ranks first")
        #expect(ranked.hits.allSatisfy { $0.score != nil })
        let scores = ranked.hits.compactMap(\.score)
        #expect(scores == scores.sorted())

        let paged = try search(store, "apple", limit: 2, rankedLimit: 3)
        #expect(paged.order == .page && paged.total == 4)
        #expect(paged.hits.map(\.page) == [ids[0], ids[1]])
        #expect(paged.hits.allSatisfy { $0.score == nil })
        // Several words past the bound are not counted.
        let words = try search(store, "apple OR cherry", limit: 10, rankedLimit: 3)
        #expect(words.order == .page && words.total == nil && words.hits.count == 5)
        // Under the bound, a query of several words is counted exactly.
        #expect(try search(store, "apple banana", rankedLimit: 3).total == 2)
    }

    @Test("--document filter and limit")
    func documentFilter() throws {
        let store = try Store(path: folder.file("farm.db"))
        let first = try addDone(store, name: "/scans/first.pdf", texts: ["invoice one", "invoice two", "letter"])
        let second = try addDone(store, name: "/scans/second.pdf", texts: ["invoice three"])
        let other = try addDone(store, name: "/other/first.pdf", texts: ["invoice four invoice"])
        #expect(try search(store, "invoice").total == 4)
        let named = try store.documents(named: "/scans/second.pdf")
        #expect(named.map(\.name) == ["/scans/second.pdf"])
        #expect(try search(store, "invoice", documents: named.map(\.id)).hits.map(\.page) == second)
        // A bare file name finds every document submitted under that name.
        let firsts = try store.documents(named: "first.pdf")
        #expect(firsts.map(\.name) == ["/scans/first.pdf", "/other/first.pdf"])
        #expect(try search(store, "invoice", documents: firsts.map(\.id)).total == 3)
        #expect(try search(store, "invoice", documents: firsts.map(\.id), limit: 2).hits.count == 2)
        // Several documents are searched one by one and merged: by score, or past the bound by page.
        let ranked = try search(store, "invoice", documents: firsts.map(\.id), limit: 2)
        #expect(ranked.hits.first?.page == other[0], "invoice twice on the page ranks first")
        let paged = try search(store, "invoice", documents: firsts.reversed().map(\.id), limit: 2, rankedLimit: 1)
        #expect(paged.order == .page && paged.total == 3 && paged.hits.map(\.page) == [first[0], first[1]])
        let pagedWords = try search(store, "invoice OR letter", documents: firsts.map(\.id), limit: 10, rankedLimit: 1)
        #expect(pagedWords.total == nil && pagedWords.hits.map(\.page) == [first[0], first[1], first[2], other[0]])
        #expect(try store.documents(named: "irst.pdf").isEmpty)
        #expect(try store.documents(named: "%.pdf").isEmpty, "LIKE wildcards in a name are literal")
    }

    @Test("keywords merge over a document's pages: most pages first, then first appearance, first spelling kept")
    func keywordRanking() throws {
        let ranked = DocumentKeywords.ranked([["Alpha", "beta", "gamma"], ["delta", "BETA", "beta"], ["beta", "delta"]])
        #expect(ranked == [.init(text: "beta", pages: 3), .init(text: "delta", pages: 2), .init(text: "Alpha", pages: 1),
                           .init(text: "gamma", pages: 1)])
        let store = try Store(path: folder.file("farm.db"))
        try addDone(store, name: "doc", texts: ["x", "y", "z"],
                    keywords: [["论语", "君子"], ["君子", "Analects"], []])
        let document = try #require(try store.documents(named: "doc").first)
        let keywords = try store.keywords(of: document)
        #expect(keywords.pagesDone == 3)
        #expect(keywords.keywords.map(\.text) == ["君子", "论语", "Analects"])
        #expect(keywords.keywords.map(\.pages) == [2, 1, 1])
        // A structure that is not JSON counts as a done page without keywords.
        _ = try store.add([NewDocument(name: "broken", source: RawPath("/b"), contentHash: nil, priority: 0,
                                       options: PageOptions(), pages: [NewPage(source: RawPath("/b/0.png"), index: 0, kind: .image)])])
        let page = try #require(try store.queuedPages(limit: 1).first)
        let attempt = try #require(try store.write { try store.lease(page.id, to: worker, now: 1, expires: 100) })
        _ = try store.write {
            try store.complete(attempt, by: worker, output: PageOutput(engine: "t", text: "", meanConfidence: 0, width: 1, height: 1,
                                                                        structure: Array("not json {".utf8), timings: "{}"),
                               startedAt: 1)
        }
        let broken = try store.keywords(of: try #require(try store.documents(named: "broken").first))
        #expect(broken.pagesDone == 1 && broken.keywords.isEmpty)
    }

    @Test("a store made by schema version 1 with results is indexed once when opened for writing")
    func backfillFromVersionOne() throws {
        let path = folder.file("old.db")
        do {
            // The store as ocrfarm wrote it before search existed: version 1 only, results without an index.
            let connection = try Connection(path: path)
            try Migrator(Array(Schema.migrations.prefix(1))).migrate(connection)
            #expect(try connection.userVersion == 1)
            try connection.execute("""
                INSERT INTO documents (id, name, source, page_count, submitted_at) VALUES (1, 'old', X'2F6F6C64', 5, 0);
                """)
            for page in 1...5 {
                try connection.execute("""
                    INSERT INTO pages (id, document_id, number, source_path, source_index, source_kind, state, priority, updated_at)
                    VALUES (\(page), 1, \(page), X'2F6F6C64', 0, 'image', 'done', 0, 0);
                    INSERT INTO results (page_id, attempt, worker_id, engine, text, mean_confidence, width, height,
                                         structure, timings, finished_at)
                    VALUES (\(page), 1, 'w', 'test', 'page \(page) of the 旧档案 archive', 90, 1, 1, X'7B7D', '{}', 0);
                    """)
            }
        }
        let readOnly = try Store(path: path, readOnly: true)
        #expect(try readOnly.hasSearchIndex == false)
        let store = try Store(path: path)
        #expect(try store.hasSearchIndex)
        #expect(try store.connection.userVersion == Schema.migrations.count, "migrated to the newest schema")
        #expect(try store.setting("search_backfill") == nil, "the marker is gone once the backfill is done")
        #expect(try search(store, "archive").total == 5)
        #expect(try search(store, "档案").total == 5)
        #expect(try search(store, "\"page 3\"").hits.map(\.page) == [PageID(3)])
        // The new indexes for status are there.
        let indexes = try store.connection.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").rows([]) { $0.text(0) }
        #expect(indexes.contains("pages_document_state") && indexes.contains("results_finished"))
        // Opening again does not index anything twice.
        let again = try Store(path: path)
        #expect(try again.backfillSearchIndex() == 0)
        #expect(try search(again, "archive").total == 5)
    }

    @Test("an interrupted backfill resumes from its marker, in batches")
    func backfillResumes() throws {
        let store = try Store(path: folder.file("farm.db"))
        let ids = try addDone(store, name: "doc", texts: (1...7).map { "word\($0) common" })
        // As if the index had been made by a migration over existing results, and two of them were done.
        try store.write {
            try store.connection.execute("DELETE FROM page_search")
            try store.setSetting("search_backfill", String(ids[1].rawValue))
        }
        #expect(try store.backfillSearchIndex(batch: 2) == 5)
        #expect(try store.setting("search_backfill") == nil)
        #expect(try search(store, "common").total == 5, "pages up to the marker count as done and are not indexed again")
        #expect(try search(store, "word7").hits.map(\.page) == [ids[6]])
    }

    @Test("a fresh store has no backfill to do")
    func freshStore() throws {
        let store = try Store(path: folder.file("farm.db"))
        #expect(try store.setting("search_backfill") == nil)
        #expect(try store.hasSearchIndex)
    }
}
