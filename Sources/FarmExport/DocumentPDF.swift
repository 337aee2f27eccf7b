import FarmCore
import QPDF
#if canImport(Glibc)
import Glibc
#endif

/// A PDF document that could not be assembled: a page file that could not be written, or qpdf's reason.
public struct DocumentPDFError: Error, CustomStringConvertible, Sendable {
    public let message: String

    public var description: String { message }
}

/// One-page PDFs gathered in order and merged into one document with qpdf: `ocrfarm ocr --format pdf` with several
/// images, and each document of `ocrfarm export`.
///
/// The pages wait as files in `directory` (never all in memory) until `merge` writes the document and removes
/// them; a single page is moved into place as it is, without a qpdf pass. Owns its page files: the ones not merged
/// are removed in `deinit`. Confined to one thread.
public final class DocumentPDF {
    /// Where the page files are kept; must exist. Put it on the output's file system so a single page is renamed,
    /// not copied.
    public let directory: String
    private let prefix: String
    public private(set) var pageCount = 0

    /// Pages go to `directory/<prefix>-<n>.pdf`; give each document in one directory its own prefix.
    public init(directory: String, prefix: String = "page") {
        self.directory = directory
        self.prefix = prefix
    }

    deinit { removePages() }

    /// Adds the next page: a complete one-page PDF.
    public func append(_ pdf: [UInt8]) throws(DocumentPDFError) {
        do {
            try FileSystem.write(pdf, to: pagePath(pageCount))
        } catch {
            throw DocumentPDFError(message: "cannot keep PDF page \(pageCount + 1): \(error)")
        }
        pageCount += 1
    }

    /// Writes the pages, in the order they were added, as one document at `output`, and removes the page files.
    public func merge(into output: String) throws(DocumentPDFError) {
        defer { removePages() }
        switch pageCount {
        case 0:
            throw DocumentPDFError(message: "no PDF pages to put into \(output)")
        case 1:
            guard rename(pagePath(0), output) == 0 else {
                throw DocumentPDFError(message: "cannot write \(output): \(String(cString: strerror(errno)))")
            }
        default:
            do {
                try QPDF.merge((0..<pageCount).map(pagePath), into: output)
            } catch {
                throw DocumentPDFError(message: "cannot merge \(pageCount) PDF pages: \(error.message)")
            }
        }
    }

    private func pagePath(_ index: Int) -> String { "\(directory)/\(prefix)-\(index).pdf" }

    private func removePages() {
        for index in 0..<pageCount { unlink(pagePath(index)) }
        pageCount = 0
    }
}
