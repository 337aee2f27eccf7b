import FarmCore
import SQLite

/// A document's pages' quality figures in one (IIIF's manifest shows them).
public struct DocumentMeasures: Sendable, Equatable {
    /// The mean quality figure of its measured pages, and how many were measured.
    public let mean: Double?
    public let measuredPages: Int
    /// Pages with a result.
    public let done: Int
}

/// A page as a canvas: its size on the canvas (the page image as submitted) and its language.
public struct CanvasPage: Sendable {
    public let id: PageID
    public let number: Int
    public let state: PageState
    /// The canvas size: the original image's (the recognized page's when it was not corrected); nil when the page
    /// has no result (its image's header gives it then).
    public let size: (width: Int, height: Int)?
    public let language: String?
    /// Whether the page's source has an image (an image file or a PDF page; not a file refused at submit).
    public let hasImage: Bool
}

/// The reading queries IIIF needs (FarmIIIF's manifests, annotations, search and images).
extension Store {
    /// The quality figures of document `id`'s done pages.
    public func measures(of id: DocumentID) throws -> DocumentMeasures {
        let (mean, measured, done) = try connection.cached("""
            SELECT avg(r.quality), count(r.quality), count(r.page_id) FROM pages p JOIN results r ON r.page_id = p.id
            WHERE p.document_id = ?
            """).first([.integer(id.rawValue)]) { ($0.optionalDouble(0), $0.int(1), $0.int(2)) } ?? (nil, 0, 0)
        return DocumentMeasures(mean: mean, measuredPages: measured, done: done)
    }

    /// The document's pages in page order, with their canvas sizes where a result gives them.
    public func canvasPages(of document: DocumentID) throws -> [CanvasPage] {
        // The canvas size is the original image's, which the page's JSON rendering records when the page was
        // corrected (or the structure, for a result rendered on demand: issue 19); a structure or rendering that is not
        // JSON gives NULL (json_extract would fail the query).
        try connection.cached("""
            SELECT p.id, p.number, p.state, r.width, r.height,
                   CASE WHEN json_valid(CAST(r.structure AS TEXT)) THEN json_extract(CAST(r.structure AS TEXT), '$.language') END,
                   COALESCE(CASE WHEN json_valid(CAST(a.data AS TEXT)) THEN json_extract(CAST(a.data AS TEXT), '$.original_size[0]') END,
                            CASE WHEN json_valid(CAST(r.structure AS TEXT)) THEN json_extract(CAST(r.structure AS TEXT), '$.original_size[0]') END),
                   COALESCE(CASE WHEN json_valid(CAST(a.data AS TEXT)) THEN json_extract(CAST(a.data AS TEXT), '$.original_size[1]') END,
                            CASE WHEN json_valid(CAST(r.structure AS TEXT)) THEN json_extract(CAST(r.structure AS TEXT), '$.original_size[1]') END),
                   p.source_kind
            FROM pages p LEFT JOIN results r ON r.page_id = p.id LEFT JOIN artifacts a ON a.page_id = p.id AND a.name = 'json'
            WHERE p.document_id = ? ORDER BY p.number
            """).rows([.integer(document.rawValue)]) { row in
            var size: (Int, Int)?
            if let w = row.optionalInt(6), let h = row.optionalInt(7), w > 0, h > 0 {
                size = (w, h)
            } else if let w = row.optionalInt(3), let h = row.optionalInt(4), w > 0, h > 0 {
                size = (w, h)
            }
            return CanvasPage(id: PageID(row.int64(0)), number: row.int(1), state: PageState(rawValue: row.text(2)) ?? .failed,
                              size: size, language: row.optionalText(5), hasImage: row.text(8) != SourceKind.invalid.rawValue)
        }
    }

    /// The pixel size page `page` was read at, as its canvas has it (the original's size from the JSON rendering,
    /// else the result's); nil without a result. A PDF page is rasterized to exactly this size, so that its image
    /// and its words' boxes agree whatever resolution the worker chose.
    public func readSize(of page: PageID) throws -> (width: Int, height: Int)? {
        try connection.cached("""
            SELECT r.width, r.height,
                   COALESCE(CASE WHEN json_valid(CAST(a.data AS TEXT)) THEN json_extract(CAST(a.data AS TEXT), '$.original_size[0]') END,
                            CASE WHEN json_valid(CAST(r.structure AS TEXT)) THEN json_extract(CAST(r.structure AS TEXT), '$.original_size[0]') END),
                   COALESCE(CASE WHEN json_valid(CAST(a.data AS TEXT)) THEN json_extract(CAST(a.data AS TEXT), '$.original_size[1]') END,
                            CASE WHEN json_valid(CAST(r.structure AS TEXT)) THEN json_extract(CAST(r.structure AS TEXT), '$.original_size[1]') END)
            FROM results r LEFT JOIN artifacts a ON a.page_id = r.page_id AND a.name = 'json' WHERE r.page_id = ?
            """).first([.integer(page.rawValue)]) { row -> (width: Int, height: Int)? in
            if let w = row.optionalInt(2), let h = row.optionalInt(3), w > 0, h > 0 { return (w, h) }
            let (w, h) = (row.int(0), row.int(1))
            return w > 0 && h > 0 ? (w, h) : nil
        } ?? nil
    }

    /// The document a page belongs to; nil for no such page.
    public func document(of page: PageID) throws -> DocumentID? {
        try connection.cached("SELECT document_id FROM pages WHERE id = ?").first([.integer(page.rawValue)]) { DocumentID($0.int64(0)) }
    }

    /// Where a page lies on its image: the two fields of its stored JSON rendering that place it (`original_size`,
    /// `to_original`) as one object; nil when it has no such rendering (a result rendered on demand: its structure
    /// holds them).
    public func placement(of page: PageID) throws -> JSON? {
        // Only these two fields: the rendering holds every word again, and parsing it all took most of the time of
        // an annotation page.
        try connection.cached("""
            SELECT json_extract(CAST(data AS TEXT), '$.original_size'), json_extract(CAST(data AS TEXT), '$.to_original')
            FROM artifacts WHERE page_id = ? AND name = 'json' AND json_valid(CAST(data AS TEXT))
            """).first([.integer(page.rawValue)]) { row in
            JSON.object([("original_size", row.optionalText(0).flatMap { try? JSON.parse($0) } ?? .null),
                         ("to_original", row.optionalText(1).flatMap { try? JSON.parse($0) } ?? .null)])
        }
    }
}
