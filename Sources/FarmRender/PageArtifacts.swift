import FarmCore

/// Who made a document, as the formats name their creator: ocrfarm's version with the engine's.
public struct DocumentCreator: Sendable, Equatable {
    /// "0.9.0 (tesseract 5.3.0)".
    public let version: String

    /// `engine` is the engine and its version, e.g. "tesseract 5.3.0".
    public init(engine: String) { version = "\(FarmVersion.string) (\(engine))" }

    /// The creator a page's model names (`RenderContext.creator`): the software that read the page, whichever renders it.
    public init(version: String) { self.version = version }

    /// "ocrfarm 0.9.0 (tesseract 5.3.0)".
    public var software: String { "ocrfarm \(version)" }
}

/// The one-page documents a page's result is rendered as (`PageOptions.outputs`, and the pages of
/// `ocrfarm ocr --format …`), each complete, made from the result model.
public enum PageArtifacts {
    /// The languages a page's documents declare: with --lang auto, the language the page was found to be in.
    public static func described(_ languages: [String], _ result: PageResult) -> [String] {
        languages == [PageOptions.automaticLanguage] ? [result.language ?? "eng"] : languages
    }

    /// The version of the JSON page object (docs/formats.md): raised when a field changes meaning or goes away.
    public static let jsonVersion = 1

    /// The JSON document of one page, the same object in `ocr --format json` (in its `pages`), in the store and in
    /// `export`: its shape's `version`, where it comes from (`source`, and `page` in it from 1), then the result.
    public static func json(source: String, page: Int, result: PageResult) -> JSON {
        var fields: [(String, JSON)] = [("version", JSON(jsonVersion)), ("source", JSON(source)), ("page", JSON(page))]
        if case .object(let resultFields) = result.json { fields += resultFields }
        return .object(fields)
    }

    /// The JSON document of a page that could not be read: where it comes from, and why.
    public static func json(source: String, page: Int, failure: PageFailure) -> JSON {
        .object([("version", JSON(jsonVersion)), ("source", JSON(source)), ("page", JSON(page)),
                 ("error", .object([("code", JSON(failure.code.rawValue)), ("stage", JSON(failure.stage)),
                                    ("message", JSON(failure.message))]))])
    }

    /// Each of `outputs` that can be rendered, in their order, as (format, bytes). `pdf` is the PDF page, already
    /// rendered from the page image (nil: no PDF page is given); the text is not a rendering.
    public static func render(_ result: PageResult, pdf: [UInt8]?, outputs: [OutputFormat], source: String, pageNumber: Int,
                              languages: [String], created: Double, creator: DocumentCreator) -> [(OutputFormat, [UInt8])]
    {
        let exported = ExportPage(result: result, imageName: source, number: 1, languages: described(languages, result))
        return outputs.compactMap { output -> (OutputFormat, [UInt8])? in
            switch output {
            case .pdf: return pdf.map { (.pdf, $0) }
            case .hocr: return (.hocr, HOCR.document(exported, system: creator.software))
            case .alto: return (.alto, ALTO.document(exported, software: "ocrfarm", version: creator.version))
            case .page: return (.page, PAGEXML.bytes(exported, creator: creator.software, created: created))
            case .json: return (.json, PageJSON.bytes(source: source, page: pageNumber, result: result))
            case .text: return nil
            }
        }
    }
}

extension PageArtifacts {
    /// The formats rendered from a page's model when they are not stored (render on demand): all but the PDF page,
    /// which shows the page image, and the text, which is stored.
    public static let renderedOnDemand: [OutputFormat] = [.hocr, .alto, .page, .json]

    /// Each of `outputs` that can be rendered from the model (`renderedOnDemand`), as the worker renders it at OCR
    /// time from the same reading (`render`): the same bytes.
    public static func render(_ model: PageModel, outputs: [OutputFormat]) -> [(OutputFormat, [UInt8])] {
        let wanted = outputs.filter(renderedOnDemand.contains)
        guard !wanted.isEmpty else { return [] }
        let context = model.context
        return render(model.result, pdf: nil, outputs: wanted, source: context.source, pageNumber: context.page,
                      languages: context.languages, created: context.created, creator: DocumentCreator(version: context.creator))
    }

    /// A rendering of `format` with its page image named `imageName` instead (the first image reference: hOCR's
    /// `image`, ALTO's `fileName`, PAGE's `imageFilename`); other formats, and a rendering without one, unchanged.
    /// An export points its files at the page image by a path that resolves from where they are written.
    public static func pointed(_ rendering: [UInt8], _ format: OutputFormat, at imageName: String) -> [UInt8] {
        let (opening, closing): (String, String)
        switch format {
        case .hocr: (opening, closing) = ("title='image \"", "\"")
        case .alto: (opening, closing) = ("<fileName>", "</fileName>")
        case .page: (opening, closing) = ("imageFilename=\"", "\"")
        case .pdf, .json, .text: return rendering
        }
        let open = Array(opening.utf8), close = Array(closing.utf8)
        guard let start = firstRange(of: open, in: rendering, from: 0)?.upperBound,
              let end = firstRange(of: close, in: rendering, from: start)?.lowerBound else { return rendering }
        // One array, filled once: a rendering is a few hundred KB and every exported page's is pointed.
        var name = ByteWriter(capacity: imageName.utf8.count + 16)
        XML.escape(imageName, into: &name)
        var pointed: [UInt8] = []
        pointed.reserveCapacity(rendering.count - (end - start) + name.count)
        pointed.append(contentsOf: rendering[..<start])
        name.withBytes(from: 0) { pointed.append(contentsOf: $0) }
        pointed.append(contentsOf: rendering[end...])
        return pointed
    }

    private static func firstRange(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Range<Int>? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index..<(index + needle.count)
            }
            index += 1
        }
        return nil
    }
}
