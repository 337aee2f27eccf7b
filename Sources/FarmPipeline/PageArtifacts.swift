import FarmCore
import FarmExport

/// The renderings a worker sends with a page's result for the store to keep (`PageOptions.outputs`), each a
/// complete one-page document made from the same result model as `ocrfarm ocr --format …` makes it.
public enum PageArtifacts {
    /// The renderings `outputs` asks for that need the engine (the PDF page carries the page image).
    public static func renderings(for outputs: [String]) -> Set<OutputFormat> { outputs.contains("pdf") ? [.pdf] : [] }

    /// The version the documents give for their creator, and the creator with it.
    public static var version: String { "\(FarmVersion.string) (tesseract \(TesseractInfo.version))" }
    public static var software: String { "ocrfarm \(version)" }

    /// The languages a page's documents declare: with --lang auto, the language the page was found to be in.
    public static func described(_ languages: [String], _ result: PageResult) -> [String] {
        languages == [PageOptions.automaticLanguage] ? [result.language ?? "eng"] : languages
    }

    /// Name and bytes of each rendering, in the order of `outputs`.
    public static func render(_ page: RecognizedPage, outputs: [String], source: String, pageNumber: Int,
                              languages: [String], created: Double) -> [(String, [UInt8])]
    {
        let exported = ExportPage(result: page.result, imageName: source, number: 1,
                                  languages: described(languages, page.result))
        return outputs.compactMap { output -> (String, [UInt8])? in
            let text: String
            switch output {
            case "pdf": return page.renderings[.pdf].map { ("pdf", $0) }
            case "hocr": text = HOCR.header(system: software) + HOCR.page(exported) + HOCR.footer
            case "alto":
                text = ALTO.header(imageName: source, software: "ocrfarm", version: version) + ALTO.page(exported) + ALTO.footer
            case "page": text = PAGEXML.document(exported, creator: software, created: created)
            case "json":
                var fields: [(String, JSON)] = [("source", JSON(source)), ("page", JSON(pageNumber))]
                if case .object(let resultFields) = page.result.json { fields += resultFields }
                text = JSON.object(fields).rendered
            default: return nil
            }
            return (output, Array(text.utf8))
        }
    }
}
