import FarmCore
import FarmStore

/// A document as IIIF shows it: its record and its quality.
struct IIIFDocument: Sendable {
    let record: DocumentRecord
    /// The mean quality figure of its measured pages, and how many were measured.
    let quality: Double?
    let measuredPages: Int
    /// Pages by state.
    let done: Int
    /// Its catalogue fields (title, date, creator, identifier, shelfmark), empty when none were set.
    let metadata: DocumentMetadata
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

/// What IIIF makes of the store's answers (the queries are FarmStore's, `Store+IIIF`).
extension Store {
    func iiifDocument(_ id: DocumentID) throws -> IIIFDocument? {
        guard let record = try document(id) else { return nil }
        let quality = try measures(of: id)
        return IIIFDocument(record: record, quality: quality.mean, measuredPages: quality.measuredPages, done: quality.done,
                            metadata: try metadata(of: id))
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

    /// A done page's lines and words on its canvas; nil when it has no result.
    func canvasText(of page: PageID) throws -> CanvasText? {
        guard let structure = try structure(of: page), let result = PageResult(json: structure) else { return nil }
        let placement = try self.placement(of: page)
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
