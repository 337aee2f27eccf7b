import FarmCore
import SQLite

/// A document's keywords: its pages' keywords merged, most pages first.
public struct DocumentKeywords: Sendable, Equatable {
    /// A keyword and on how many of the document's pages it is.
    public struct Keyword: Sendable, Equatable {
        public let text: String
        public let pages: Int

        public init(text: String, pages: Int) {
            self.text = text
            self.pages = pages
        }
    }

    public let document: DocumentRecord
    /// Pages with a result (the keywords come from these).
    public let pagesDone: Int
    public let keywords: [Keyword]

    /// Merges the keywords of a document's pages (in page order, each page's in its order, as the workers computed
    /// them): ranked by the number of pages a keyword is on, then by first appearance. Keywords are compared in
    /// lower case and keep their first spelling; a keyword listed twice on one page counts once.
    public static func ranked(_ pages: [[String]]) -> [Keyword] {
        var tally: [String: (spelling: String, pages: Int, first: Int)] = [:]
        var order = 0
        for page in pages {
            var seen: Set<String> = []
            for keyword in page {
                let key = keyword.lowercased()
                guard seen.insert(key).inserted else { continue }
                if let entry = tally[key] {
                    tally[key] = (entry.spelling, entry.pages + 1, entry.first)
                } else {
                    tally[key] = (keyword, 1, order)
                    order += 1
                }
            }
        }
        return tally.values.sorted { $0.pages != $1.pages ? $0.pages > $1.pages : $0.first < $1.first }
            .map { Keyword(text: $0.spelling, pages: $0.pages) }
    }
}

extension Store {
    /// Every document (or the given ones), in submission order.
    public func documentRecords(_ ids: [DocumentID]? = nil) throws -> [DocumentRecord] {
        let map: (Statement) -> DocumentRecord = {
            DocumentRecord(id: DocumentID($0.int64(0)), name: $0.text(1), pageCount: $0.int(2), submittedAt: $0.double(3))
        }
        guard let ids else {
            return try connection.cached("SELECT id, name, page_count, submitted_at FROM documents ORDER BY id").rows([], map)
        }
        let statement = try connection.cached("SELECT id, name, page_count, submitted_at FROM documents WHERE id = ?")
        return try ids.sorted().compactMap { try statement.first([.integer($0.rawValue)], map) }
    }

    /// The keywords of `document`: the `keywords` the workers stored in each done page's structure, merged by
    /// `DocumentKeywords.ranked`. A page whose structure is not JSON or has no keyword list counts as done with none.
    public func keywords(of document: DocumentRecord) throws -> DocumentKeywords {
        // SQLite extracts the small keyword list, so the page structure (every word with its box) is not parsed here.
        let pages = try connection.cached("""
            SELECT CASE WHEN json_valid(CAST(r.structure AS TEXT))
                        THEN json_extract(CAST(r.structure AS TEXT), '$.keywords') END
            FROM pages p JOIN results r ON r.page_id = p.id
            WHERE p.document_id = ? ORDER BY p.number
            """).rows([.integer(document.id.rawValue)]) { row -> [String] in
            guard let list = row.optionalText(0), let json = try? JSON.parse(list) else { return [] }
            return json.arrayValue?.compactMap(\.stringValue) ?? []
        }
        return DocumentKeywords(document: document, pagesDone: pages.count, keywords: DocumentKeywords.ranked(pages))
    }
}
