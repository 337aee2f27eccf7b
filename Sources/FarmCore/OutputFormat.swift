/// A format a page's reading is written in: `ocrfarm ocr --format`, the renderings a worker sends for the store
/// (`PageOptions.outputs`, `submit --outputs`), and the files `ocrfarm export` writes. Stored and sent by its raw
/// value, which is also the name a stored rendering is kept under.
public enum OutputFormat: String, Sendable, CaseIterable {
    case text, json, hocr, alto, page, pdf

    /// What a worker can render for the store, each a complete one-page document: a searchable PDF page, hOCR,
    /// ALTO, PAGE XML, and the full JSON (`ocr --format json`). The text is always stored, so it is not among them.
    public static let storable: [OutputFormat] = [.pdf, .hocr, .alto, .page, .json]

    /// What `ocrfarm export` writes, in the order it writes them.
    public static let exported: [OutputFormat] = [.pdf, .text, .hocr, .alto, .page, .json]

    /// The format needs the page image, not only the result model: the PDF page shows it under the text.
    public var needsPageImage: Bool { self == .pdf }

    /// The name `ocrfarm export --format` and `ocr --format` show: one spelling per format, its raw value.
    public var exportName: String { rawValue }

    /// The format named on a command line: its raw value, or `txt` for the text (the ending of its files, which
    /// people type too).
    public init?(exportName: String) {
        if exportName == "txt" { self = .text; return }
        guard let format = Self(rawValue: exportName) else { return nil }
        self = format
    }

    /// How an exported file's name ends: `<document>.pdf`, `<document>/<page>.txt`, `….hocr`, `….alto.xml`,
    /// `….page.xml`, `….json`.
    public var fileExtension: String {
        switch self {
        case .pdf: "pdf"
        case .text: "txt"
        case .hocr: "hocr"
        case .alto: "alto.xml"
        case .page: "page.xml"
        case .json: "json"
        }
    }
}
