import FarmCore
import FarmStore

/// Presentation API 3.0 documents: the manifest of a document and the annotation page of a page's text.
enum Presentation {
    static let context = "http://iiif.io/api/presentation/3/context.json"
    static let searchContext = "http://iiif.io/api/search/2/context.json"
    static let imageContext = "http://iiif.io/api/image/3/context.json"

    static func label(_ text: String, language: String = "none") -> JSON { .object([(language, .array([JSON(text)]))]) }

    static func entry(_ name: String, _ value: String) -> JSON {
        .object([("label", label(name, language: "en")), ("value", label(value))])
    }

    /// The manifest: a canvas per page whose size is known (done pages; others by their image's header), the
    /// page image painted on it with its Image API service, its text as a separate annotation page (done pages),
    /// and, when served, the document's Content Search service.
    static func manifest(_ document: IIIFDocument, canvases: [(page: CanvasPage, width: Int, height: Int)],
                         links: IIIFLinks) -> JSON
    {
        let id = document.record.id
        let catalogue = document.metadata
        // The catalogue's fields first (as a IIIF viewer shows them, in the order the viewer's form has them).
        var metadata = DocumentMetadata.Field.allCases.filter { !catalogue[$0].isEmpty }.map { entry($0.label, catalogue[$0]) }
        metadata += [
            entry("Document", document.record.name),
            entry("Pages", String(document.record.pageCount)),
            entry("Pages read", String(document.done)),
        ]
        if let quality = document.quality {
            metadata.append(entry("Quality", Format.fixed(quality, 2) + " (mean of \(document.measuredPages) pages, 0–1)"))
        }
        var fields: [(String, JSON)] = [
            ("@context", links.isStatic ? JSON(context) : [JSON(searchContext), JSON(context)]),
            ("id", JSON(links.manifest(id))),
            ("type", "Manifest"),
            ("label", label(catalogue.title.isEmpty ? document.record.name : catalogue.title)),
            ("metadata", .array(metadata)),
        ]
        if let navDate = navDate(catalogue.date) { fields.append(("navDate", JSON(navDate))) }
        if !links.isStatic {
            fields.append(("service", [.object([("id", JSON(links.search(id))), ("type", "SearchService2")])]))
        }
        fields.append(("items", .array(canvases.map { canvas($0.page, width: $0.width, height: $0.height, document: id, links: links) })))
        return .object(fields)
    }

    /// The Presentation API's `navDate` (an xsd:dateTime in UTC) for a catalogue date of `YYYY`, `YYYY-MM` or
    /// `YYYY-MM-DD`: its first day, at midnight; nil without a date.
    static func navDate(_ date: String) -> String? {
        guard !date.isEmpty else { return nil }
        let parts = date.split(separator: "-")
        guard (1...3).contains(parts.count) else { return nil }
        return parts[0] + "-" + (parts.count > 1 ? parts[1] : "01") + "-" + (parts.count > 2 ? parts[2] : "01") + "T00:00:00Z"
    }

    static func canvas(_ page: CanvasPage, width: Int, height: Int, document: DocumentID, links: IIIFLinks) -> JSON {
        let canvasID = links.canvas(document, page.id)
        let service: JSON = .object([
            ("id", JSON(links.imageService(page.id))),
            ("type", "ImageService3"),
            ("profile", links.isStatic ? "level0" : "level1"),
        ])
        let image: JSON = .object([
            ("id", JSON(links.fullImage(page.id))),
            ("type", "Image"),
            ("format", "image/jpeg"),
            ("width", JSON(width)),
            ("height", JSON(height)),
            ("service", [service]),
        ])
        let painting: JSON = .object([
            ("id", JSON(canvasID + "/paint")),
            ("type", "AnnotationPage"),
            ("items", [.object([
                ("id", JSON(canvasID + "/paint/image")),
                ("type", "Annotation"),
                ("motivation", "painting"),
                ("body", image),
                ("target", JSON(canvasID)),
            ])]),
        ])
        var fields: [(String, JSON)] = [
            ("id", JSON(canvasID)),
            ("type", "Canvas"),
            ("label", label("Page \(page.number)", language: "en")),
            ("width", JSON(width)),
            ("height", JSON(height)),
            ("items", [painting]),
        ]
        if page.state == .done {
            fields.append(("annotations", [.object([("id", JSON(links.annotations(document, page.id))), ("type", "AnnotationPage")])]))
        }
        return .object(fields)
    }

    /// `canvas#xywh=…`: a box on the canvas (at least one pixel each way: an empty fragment means nothing).
    static func target(_ canvas: String, _ box: Rect) -> String {
        "\(canvas)#xywh=\(box.x),\(box.y),\(max(box.width, 1)),\(max(box.height, 1))"
    }

    /// The page's text, line by line, as `supplementing` annotations on its canvas.
    static func annotationPage(_ text: CanvasText, page: PageID, document: DocumentID, links: IIIFLinks) -> JSON {
        let pageID = links.annotations(document, page)
        let canvasID = links.canvas(document, page)
        let language = LanguageTag.tag(text.language)
        let base = links.isStatic ? String(pageID.dropLast(5)) : pageID
        let items: [JSON] = text.lines.enumerated().compactMap { index, line in
            guard !line.text.isEmpty else { return nil }
            var body: [(String, JSON)] = [("type", "TextualBody"), ("value", JSON(line.text)), ("format", "text/plain")]
            if language != "none" { body.append(("language", JSON(language))) }
            return .object([
                ("id", JSON("\(base)/line/\(index + 1)")),
                ("type", "Annotation"),
                ("motivation", "supplementing"),
                ("body", .object(body)),
                ("target", JSON(target(canvasID, line.box))),
            ])
        }
        return .object([
            ("@context", JSON(context)),
            ("id", JSON(pageID)),
            ("type", "AnnotationPage"),
            ("items", .array(items)),
        ])
    }
}
