import FarmCore
import QPDF
import Tesseract

/// Wraps page-level renderings into whole documents.
public enum DocumentAssembly {
    /// Merges one-page PDFs into one document, in order.
    public static func mergePDFs(_ paths: [String], into output: String) throws(PageFailure) {
        do {
            try QPDF.merge(paths, into: output)
        } catch {
            throw PageFailure(stage: "render", code: .internalError, message: error.description)
        }
    }
}
