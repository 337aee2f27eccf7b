import FarmCore
import FarmStore
import SQLite

/// A document as IIIF shows it: its record and its quality.
struct IIIFDocument: Sendable {
    let record: DocumentRecord
    /// The mean quality figure of its measured pages, and how many were measured.
    let quality: Double?
    let measuredPages: Int
    /// Pages by state.
    let done: Int
}

/// A page as a canvas: its size on the canvas (the page image as submitted) and its language.
struct CanvasPage: Sendable {
    let id: PageID
    let number: Int
    let state: PageState
    /// The canvas size: the original image's (the recognized page's when it was not corrected); nil when the page
    /// has no result (its image's header gives it then).
    let size: (width: Int, height: Int)?
    let language: String?
    /// Whether the page's source has an image (an image file or a PDF page; not a file refused at submit).
    let hasImage: Bool
}

/// A page's text on its canvas: lines and words with boxes in canvas pixels.
struct CanvasText: Sendable {
    struct Word: Sendable { let text: String; let box: Rect }
    struct Line: Sendable { let text: String; let box: Rect; let words: [Word] }
    let width: Int
    let height: Int
    let language: String?
    let lines: [Line]
}

/// The reading queries IIIF needs, on a store opened read-only.
extension Store {
    func iiifDocument(_ id: DocumentID) throws -> IIIFDocument? {
        guard id.rawValue > Int64.min,
              let record = try documents(after: DocumentID(id.rawValue - 1), limit: 1).first, record.id == id
        else { return nil }
        let (quality, measured, done) = try connection.cached("""
            SELECT avg(r.quality), count(r.quality), count(r.page_id) FROM pages p JOIN results r ON r.page_id = p.id
            WHERE p.document_id = ?
            """).first([.integer(id.rawValue)]) { ($0.optionalDouble(0), $0.int(1), $0.int(2)) } ?? (nil, 0, 0)
        return IIIFDocument(record: record, quality: quality, measuredPages: measured, done: done)
    }

    func canvasPages(of document: DocumentID) throws -> [CanvasPage] {
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
    func readSize(of page: PageID) throws -> (width: Int, height: Int)? {
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

    /// The document's pages with their canvas sizes; a page without a result is sized by its image's header, and
    /// left out when that cannot be read (a file gone, a file refused at submit, a PDF page not read yet).
    func iiifCanvases(of document: DocumentID) throws -> [(page: CanvasPage, width: Int, height: Int)] {
        try canvasPages(of: document).compactMap { page in
            guard page.hasImage else { return nil }
            if let size = page.size { return (page, size.width, size.height) }
            guard let source = try source(of: page.id), let size = try? PageImages.size(of: source) else { return nil }
            return (page, size.width, size.height)
        }
    }

    /// The document a page belongs to.
    func documentOf(_ page: PageID) throws -> DocumentID? {
        try connection.cached("SELECT document_id FROM pages WHERE id = ?").first([.integer(page.rawValue)]) { DocumentID($0.int64(0)) }
    }

    /// A done page's lines and words on its canvas; nil when it has no result.
    func canvasText(of page: PageID) throws -> CanvasText? {
        guard let structure = try structure(of: page), let result = PageResult(json: structure) else { return nil }
        // Only the two fields of the page's JSON rendering that place it on the image: the rendering holds every
        // word again, and parsing it all took most of the time of an annotation page.
        let placement = try connection.cached("""
            SELECT json_extract(CAST(data AS TEXT), '$.original_size'), json_extract(CAST(data AS TEXT), '$.to_original')
            FROM artifacts WHERE page_id = ? AND name = 'json' AND json_valid(CAST(data AS TEXT))
            """).first([.integer(page.rawValue)]) { row in
            JSON.object([("original_size", row.optionalText(0).flatMap { try? JSON.parse($0) } ?? .null),
                         ("to_original", row.optionalText(1).flatMap { try? JSON.parse($0) } ?? .null)])
        }
        // A result rendered on demand has no stored JSON rendering: its structure holds the same two fields.
        let geometry = CanvasGeometry(result: result, rendering: placement ?? structure)
        let lines = result.lines.map { line in
            CanvasText.Line(text: line.text, box: geometry.canvasBox(line.box),
                            words: line.words.map { CanvasText.Word(text: Scripts.trimmed($0.text), box: geometry.canvasBox($0.box)) })
        }
        return CanvasText(width: geometry.width, height: geometry.height, language: result.language, lines: lines)
    }
}

/// From the recognized (corrected) page to the canvas (the image as submitted): the page JSON's `to_original`
/// homography and `original_size` when the page was corrected, else the same coordinates.
struct CanvasGeometry {
    let width: Int
    let height: Int
    let toOriginal: Homography?

    init(result: PageResult, rendering: JSON?) {
        if let size = rendering?["original_size"]?.arrayValue, size.count == 2, let w = size[0].intValue,
           let h = size[1].intValue, w > 0, h > 0
        {
            (width, height) = (w, h)
        } else {
            (width, height) = (result.width, result.height)
        }
        let matrix = rendering?["to_original"]?.arrayValue?.compactMap(\.doubleValue) ?? []
        toOriginal = matrix.count == 9 ? Homography(matrix) : nil
    }

    /// The box's corners mapped to the canvas, their bounding box, cut to the canvas.
    func canvasBox(_ box: Rect) -> Rect {
        guard let toOriginal else { return clipped(box) }
        let corners = [Point(Double(box.x), Double(box.y)), Point(Double(box.maxX), Double(box.y)),
                       Point(Double(box.maxX), Double(box.maxY)), Point(Double(box.x), Double(box.maxY))].map(toOriginal.apply)
        let left = corners.map(\.x).min() ?? 0, right = corners.map(\.x).max() ?? 0
        let top = corners.map(\.y).min() ?? 0, bottom = corners.map(\.y).max() ?? 0
        guard left.isFinite, right.isFinite, top.isFinite, bottom.isFinite else { return clipped(box) }
        let x = Int(left.rounded(.down)), y = Int(top.rounded(.down))
        return clipped(Rect(x: x, y: y, width: Int(right.rounded(.up)) - x, height: Int(bottom.rounded(.up)) - y))
    }

    private func clipped(_ box: Rect) -> Rect {
        let x = min(max(box.x, 0), width), y = min(max(box.y, 0), height)
        return Rect(x: x, y: y, width: max(min(box.maxX, width) - x, 0), height: max(min(box.maxY, height) - y, 0))
    }
}
