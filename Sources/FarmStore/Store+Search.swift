import FarmCore
import SQLite

/// A page that matches a search.
public struct SearchHit: Sendable, Equatable {
    public let page: PageID
    public let document: DocumentID
    public let documentName: String
    /// Page number within the document, from 1.
    public let number: Int
    public let source: RawPath
    /// Page within the source file (TIFF or PDF page), from 0.
    public let sourceIndex: Int
    /// Text around the matches, on one line, each match between `SearchHit.markStart` and `SearchHit.markEnd`.
    public let snippet: String
    /// FTS5's bm25 score (lower is better); nil when the hits are in page order.
    public let score: Double?

    /// Control characters that bracket each match in `snippet`, for the caller to replace (they cannot occur in
    /// recognized text).
    public static let markStart: Character = "\u{02}"
    public static let markEnd: Character = "\u{03}"
}

/// The answer to a search: the first hits, how many pages match, and how the hits are ordered.
public struct SearchResults: Sendable {
    public enum Order: String, Sendable {
        /// By bm25 relevance.
        case relevance
        /// By page id (submission order): too many pages match to score them all within the time budget.
        case page
    }

    public let hits: [SearchHit]
    /// Pages that match (all of them, not only the hits returned); nil when more than the ranking bound match and
    /// the query is more than one word (counting them all could take seconds).
    public let total: Int?
    public let order: Order
}

extension Store {
    /// Pages beyond which search orders by page instead of scoring every match: bm25 reads each matching page's
    /// statistics, 1–2 µs a page (0.06 s for 50,000 pages, 1.9 s for a word on all of a million), so scoring is
    /// kept well within 0.3 s, with room for longer pages and a cold cache.
    public static let rankedSearchLimit = 20_000

    /// True when the store has the search index (schema version 2 or later); an older store gets it, and its
    /// results indexed, when it is next opened for writing.
    public var hasSearchIndex: Bool {
        get throws { try connection.userVersion >= 2 }
    }

    /// Documents whose name matches `query` (accents folded, as page text is), best first, at most `limit`; none
    /// in a store from before the name index (schema version 4).
    public func documents(matchingName query: SearchQuery, limit: Int) throws -> [DocumentRecord] {
        guard try connection.userVersion >= 4 else { return [] }
        return try connection.cached("""
            SELECT d.id, d.name, d.page_count, d.submitted_at FROM document_search s JOIN documents d ON d.id = s.rowid
            WHERE document_search MATCH ? ORDER BY s.rank LIMIT ?
            """).rows([.text(query.nameMatch), .integer(Int64(limit))]) {
            DocumentRecord(id: DocumentID($0.int64(0)), name: $0.text(1), pageCount: $0.int(2), submittedAt: $0.double(3))
        }
    }

    /// Pages whose text matches `query`, best first, at most `limit` hits; only pages of `documents` when given.
    /// Up to `rankedSearchLimit` matches are ranked by bm25; past that the hits come in page order (`order`).
    public func search(_ query: SearchQuery, documents: [DocumentID]? = nil, limit: Int,
                       rankedLimit: Int = Store.rankedSearchLimit) throws -> SearchResults
    {
        try read {
            let match = SQLiteValue.text(query.match)
            // Each document is searched on its own: its pages are added in one transaction, so their ids are (in
            // practice) one range, which lets FTS5 skip the rest of the index; the join keeps the filter exact
            // whatever the ids are. One range over several documents could span the whole store.
            var scopes: [[SQLiteValue]] = []
            if let documents {
                let range = try connection.cached("SELECT min(id), max(id) FROM pages WHERE document_id = ?")
                for document in Set(documents).sorted() {
                    let bounds = try range.first([.integer(document.rawValue)]) { row in
                        row.isNull(0) ? nil : [SQLiteValue.integer(row.int64(0)), .integer(row.int64(1))]
                    }
                    if let bounds = bounds ?? nil { scopes.append([match] + bounds + [.integer(document.rawValue)]) }
                }
            } else {
                scopes = [[match]]
            }
            let from = documents == nil ? "page_search s" : "page_search s JOIN pages p ON p.id = s.rowid"
            let filter = documents == nil ? "" : " AND s.rowid BETWEEN ? AND ? AND p.document_id = ?"
            // Whether to rank: count the matches up to the bound only, which is cheap whatever the query.
            let count = try connection.cached("SELECT count(*) FROM (SELECT 1 FROM \(from) WHERE page_search MATCH ?\(filter) LIMIT ?)")
            var capped = 0
            for scope in scopes where capped <= rankedLimit {
                capped += try count.first(scope + [.integer(Int64(rankedLimit + 1 - capped))]) { $0.int(0) } ?? 0
            }
            guard capped > 0 else { return SearchResults(hits: [], total: 0, order: .relevance) }
            let order: SearchResults.Order = capped > rankedLimit ? .page : .relevance
            var total: Int? = capped
            if order == .page {
                // Past the bound the exact count is one scan of a word's page list (0.06 s for a word on every one
                // of a million pages); phrases and operators can cost several such scans, so they are not counted.
                total = nil
                if query.isSingleToken {
                    let exact = try connection.cached("SELECT count(*) FROM \(from) WHERE page_search MATCH ?\(filter)")
                    total = try scopes.reduce(0) { try $0 + (exact.first($1) { $0.int(0) } ?? 0) }
                }
            }
            let hitsInScope = try connection.cached("""
                SELECT s.rowid, snippet(page_search, 0, char(2), char(3), '…', 24), \(order == .relevance ? "s.rank" : "NULL"),
                       p.document_id, p.number, p.source_path, p.source_index, d.name
                FROM page_search s JOIN pages p ON p.id = s.rowid JOIN documents d ON d.id = p.document_id
                WHERE page_search MATCH ?\(filter)
                ORDER BY \(order == .relevance ? "s.rank" : "s.rowid") LIMIT ?
                """)
            var hits: [SearchHit] = []
            for scope in scopes {
                hits += try hitsInScope.rows(scope + [.integer(Int64(limit))]) { row in
                    SearchHit(page: PageID(row.int64(0)), document: DocumentID(row.int64(3)), documentName: row.text(7),
                              number: row.int(4), source: RawPath(bytes: row.blob(5)), sourceIndex: row.int(6),
                              snippet: Self.displayedSnippet(row.text(1)), score: row.optionalDouble(2))
                }
            }
            // bm25 scores of one index compare across documents: the best of each document's best are the best.
            if scopes.count > 1 {
                hits.sort { order == .relevance ? ($0.score ?? 0, $0.page) < ($1.score ?? 0, $1.page) : $0.page < $1.page }
                hits = Array(hits.prefix(limit))
            }
            return SearchResults(hits: hits, total: total, order: order)
        }
    }

    /// A snippet as people read it: the index's separators removed, marks of adjacent matches joined (each Chinese
    /// character is a match of its own), all whitespace one space (none between Chinese or Japanese characters).
    static func displayedSnippet(_ indexed: String) -> String {
        let characters = Array(SearchText.displayed(indexed))
        func isMark(_ c: Character) -> Bool { c == SearchHit.markStart || c == SearchHit.markEnd }
        var text = ""
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character.isWhitespace {
                let end = characters[index...].firstIndex { !$0.isWhitespace } ?? characters.count
                // A line break inside Chinese or Japanese text is no space.
                let before = text.last { !isMark($0) }
                let after = characters[end...].first { !isMark($0) }
                if !text.isEmpty, end < characters.count,
                   !(before.map(Scripts.isUnspaced) ?? false) || !(after.map(Scripts.isUnspaced) ?? false) {
                    text.append(" ")
                }
                index = end
                continue
            }
            if character == SearchHit.markStart, text.last == SearchHit.markEnd {
                text.removeLast()
            } else {
                text.append(character)
            }
            index += 1
        }
        return text
    }

    // MARK: Indexing

    /// Puts a page's text into the search index (replacing what was there); part of recording its result.
    func indexForSearch(_ page: PageID, text: String) throws {
        // A page without text has nothing to find (blank pages, the null engine): no row.
        guard text.contains(where: { !$0.isWhitespace }) else { return }
        try connection.cached("INSERT OR REPLACE INTO page_search (rowid, body) VALUES (?, ?)")
            .execute([.integer(page.rawValue), .text(SearchText.indexed(text))])
    }

    /// Indexes the results stored before the store had a search index (schema version 2), once. This is Swift
    /// rather than SQL in the migration because the text is spaced out by `SearchText`. The migration leaves a
    /// marker row holding the last page indexed; each batch is its own short transaction (a running coordinator
    /// keeps writing in between) and moves the marker, so an interrupted backfill resumes where it stopped.
    /// Returns how many results were indexed.
    @discardableResult
    func backfillSearchIndex(batch: Int = 2_000) throws -> Int {
        var indexed = 0
        while true {
            let finished = try write { () throws -> Bool in
                guard let marker = try setting("search_backfill") else { return true }
                let rows = try connection.cached("SELECT page_id, text FROM results WHERE page_id > ? ORDER BY page_id LIMIT ?")
                    .rows([.integer(Int64(marker) ?? 0), .integer(Int64(batch))]) { (PageID($0.int64(0)), $0.text(1)) }
                for (page, text) in rows { try indexForSearch(page, text: text) }
                indexed += rows.count
                if rows.count < batch {
                    try connection.cached("DELETE FROM coordinator WHERE key = 'search_backfill'").execute()
                    return true
                }
                try setSetting("search_backfill", String(rows[rows.count - 1].0.rawValue))
                return false
            }
            if finished { return indexed }
        }
    }

    /// Folds the Greek accents of the names indexed before names were folded (issue 36), once: the marker
    /// setting `names_folded` says it is done. Names are few (one a document), so it is one transaction.
    func foldDocumentNames() throws {
        guard try connection.userVersion >= 4, try setting("names_folded") == nil else { return }
        try write {
            let names = try connection.cached("SELECT id, name FROM documents").rows([]) { ($0.int64(0), $0.text(1)) }
            for (id, name) in names where SearchText.folded(name) != name {
                try indexName(of: DocumentID(id), name: name, metadata: try metadata(of: DocumentID(id)))
            }
            try setSetting("names_folded", "1")
        }
    }

    // MARK: Documents by name

    /// The documents called `name`; when none is, those whose name's last path component is `name` (documents
    /// are named by the path they were submitted as).
    public func documents(named name: String) throws -> [DocumentRecord] {
        let map: (Statement) -> DocumentRecord = {
            DocumentRecord(id: DocumentID($0.int64(0)), name: $0.text(1), pageCount: $0.int(2), submittedAt: $0.double(3))
        }
        let exact = try connection.cached("SELECT id, name, page_count, submitted_at FROM documents WHERE name = ? ORDER BY id")
            .rows([.text(name)], map)
        if !exact.isEmpty { return exact }
        if name.contains("/") {
            // A path to a submitted file or folder, as typed now (names are relative to the submitted folder, the
            // stored source is absolute).
            let typed = RawPath(name)
            let absolute = RawPath.currentDirectory.map { typed.absolute(in: $0) } ?? typed
            let bySource = try connection.cached("SELECT id, name, page_count, submitted_at FROM documents WHERE source = ? ORDER BY id")
                .rows([.blob(absolute.bytes)], map)
            if !bySource.isEmpty { return bySource }
        }
        return try connection.cached("""
            SELECT id, name, page_count, submitted_at FROM documents WHERE name LIKE '%/' || ? ESCAPE '\\' ORDER BY id
            """).rows([.text(Self.likeEscaped(name))], map).filter { $0.name.hasSuffix("/" + name) }
    }

    static func likeEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
