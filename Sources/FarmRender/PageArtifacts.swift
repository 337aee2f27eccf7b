import FarmCore

/// Who made a document, as the formats name their creator: ocrfarm's version with the engine's.
public struct DocumentCreator: Sendable, Equatable {
    /// "0.9.0 (tesseract 5.3.0)".
    public let version: String

    /// `engine` is the engine and its version, e.g. "tesseract 5.3.0".
    public init(engine: String) { version = "\(FarmVersion.string) (\(engine))" }

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

    /// The JSON document of one page: where it comes from (`source`, and `page` in it from 1), then the result.
    public static func json(source: String, page: Int, result: PageResult) -> JSON {
        var fields: [(String, JSON)] = [("source", JSON(source)), ("page", JSON(page))]
        if case .object(let resultFields) = result.json { fields += resultFields }
        return .object(fields)
    }

    /// The JSON document of a page that could not be read: where it comes from, and why.
    public static func json(source: String, page: Int, failure: PageFailure) -> JSON {
        .object([("source", JSON(source)), ("page", JSON(page)),
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
            let text: String
            switch output {
            case .pdf: return pdf.map { (.pdf, $0) }
            case .hocr: text = HOCR.header(system: creator.software) + HOCR.page(exported) + HOCR.footer
            case .alto:
                text = ALTO.header(imageName: source, software: "ocrfarm", version: creator.version) + ALTO.page(exported)
                    + ALTO.footer
            case .page: text = PAGEXML.document(exported, creator: creator.software, created: created)
            case .json: text = json(source: source, page: pageNumber, result: result).rendered
            case .text: return nil
            }
            return (output, Array(text.utf8))
        }
    }
}
