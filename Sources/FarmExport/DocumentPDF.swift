import FarmCore
import FarmRender
import FarmRuntime
import Leptonica
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
/// images, and each document of `ocrfarm export`. A document that came in as one PDF is instead that PDF with the
/// pages' text layers laid over it (`overlay`).
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
    /// For each page file, the page of the source PDF it is (from 0) with ocrfarm's text layer, when it is one.
    private var sourcePages: [Int?] = []

    /// Pages go to `directory/<prefix>-<n>.pdf`; give each document in one directory its own prefix.
    public init(directory: String, prefix: String = "page") {
        self.directory = directory
        self.prefix = prefix
    }

    deinit { removePages() }

    /// Adds the next page: a complete one-page PDF; with `sourcePage`, page `sourcePage` (from 0) of the document's
    /// source PDF with the text layer ocrfarm added (`QPDF.addingText`), for `overlay`.
    public func append(_ pdf: [UInt8], sourcePage: Int? = nil) throws(DocumentPDFError) {
        do {
            try FileSystem.write(pdf, to: pagePath(pageCount))
        } catch {
            throw DocumentPDFError(message: "cannot keep PDF page \(pageCount + 1): \(error)")
        }
        pageCount += 1
        sourcePages.append(sourcePage)
    }

    /// Writes `source` (the PDF the pages came from, `name` in messages) to `output` with the text layers of the
    /// pages added as source pages laid over their pages (`QPDF.addingTextLayers`), and removes the page files.
    /// The source stays the document it was: its page count and order, outline, `/Info` and XMP metadata (and any
    /// PDF/A claim), annotations and links; a page no text was added to (failed, not done, kept with its own text)
    /// stays as it is. With `replacingEarlier` (`--pdf-text redo`), the text layers an earlier ocrfarm run added
    /// to those pages are removed, as they were from the page files. When it fails, the page files are kept (for
    /// `merge`).
    ///
    /// With `type` PDF/A-2B, the document is then made PDF/A-2B (`PDFArchive`; `title` when its `/Info` has none),
    /// and how is returned: nil for a plain PDF. A plain PDF with `document`'s fields set gets a new `/Info`: its
    /// own title, author, subject and keywords with the fields over them, and no XMP (which would say otherwise).
    @discardableResult
    public func overlay(_ source: [UInt8], name: String, into output: String, replacingEarlier: Bool, type: PDFType = .pdf,
                        title: String = "", document: DocumentMetadata = DocumentMetadata()) throws(DocumentPDFError)
        -> PDFArchiveOutcome?
    {
        let pages = sourcePages.indices.compactMap { index in sourcePages[index].map { (page: $0, path: pagePath(index)) } }
        let overlaid = type == .pdfa2b || !document.isEmpty ? "\(directory)/\(prefix)-overlaid.pdf" : output
        defer { if overlaid != output { unlink(overlaid) } }
        do {
            let pdf = try QPDF.addingTextLayers(to: source, name: name, from: pages, fontName: PDFOverlay.fontName,
                                                replacingEarlier: replacingEarlier) { try? Zlib.compress($0) }
            try FileSystem.write(pdf, to: overlaid)
        } catch let error as QPDFError {
            throw DocumentPDFError(message: "cannot add the text to \(name): \(error.message)")
        } catch {
            throw DocumentPDFError(message: "cannot write \(output): \(error)")
        }
        let outcome = type == .pdfa2b ? try PDFArchive.make(overlaid, into: output, title: title.isEmpty ? name : title, document: document) : nil
        if type != .pdfa2b, overlaid != output {
            do {
                var found = try QPDF.documentInfo(overlaid)
                for (key, value) in PDFMetadata.infoEntries(document) { found[key] = value }
                if !document.title.isEmpty { found["Title"] = document.title }
                let info = ["Title", "Author", "Subject", "Keywords", "Date", "Identifier", "Shelfmark"]
                    .compactMap { key in found[key].map { (key: key, value: $0) } }
                    + [("Producer", PDFMetadata.producer), ("ModDate", PDFMetadata.pdfDate(Clock.now))]
                try QPDF.setMetadata(overlaid, into: output, info: info, xmp: nil, outputIntent: nil)
            } catch {
                throw DocumentPDFError(message: "cannot write \(output): \(error.message)")
            }
        }
        removePages()
        return outcome
    }

    /// What the merged document says it is: its title, whether it is PDF/A-2B, and its catalogue fields (whose
    /// title, when set, is the document's).
    public struct Metadata: Sendable {
        public let title: String
        public let type: PDFType
        public let document: DocumentMetadata

        public init(title: String, type: PDFType, document: DocumentMetadata = DocumentMetadata()) {
            self.title = document.title.isEmpty ? title : document.title
            self.type = type
            self.document = document
        }
    }

    /// Writes the pages, in the order they were added, as one document at `output`, and removes the page files.
    ///
    /// With `metadata`, the document gets its own `/Info` (title, producer, dates) and, for PDF/A-2B, XMP metadata
    /// that agrees with it and the sRGB output intent its pages were made for: qpdf's merge starts from an empty
    /// document, which has neither, and a single page would keep its page's title. Without it (a plain single
    /// page), the page file is moved into place as it is.
    ///
    /// A PDF/A-2B document with pages of PDFs ocrfarm did not write (`sourcePage` given) is merged plainly and then
    /// made PDF/A-2B by `PDFArchive`, which returns how (nil otherwise).
    @discardableResult
    public func merge(into output: String, metadata: Metadata? = nil) throws(DocumentPDFError) -> PDFArchiveOutcome? {
        defer { removePages() }
        if let metadata, metadata.type == .pdfa2b, pageCount > 0, sourcePages.contains(where: { $0 != nil }) {
            let merged = "\(directory)/\(prefix)-merged.pdf"
            defer { unlink(merged) }
            do {
                try QPDF.merge((0..<pageCount).map(pagePath), into: merged)
            } catch {
                throw DocumentPDFError(message: "cannot merge \(pageCount) PDF page\(pageCount == 1 ? "" : "s"): \(error.message)")
            }
            return try PDFArchive.make(merged, into: output, title: metadata.title, document: metadata.document)
        }
        if let metadata, pageCount > 0 {
            var archive: PDFAProfile?
            if metadata.type == .pdfa2b {
                switch PDFAProfile.current() {
                case .success(let profile): archive = profile
                case .failure(let error): throw DocumentPDFError(message: error.message)
                }
            }
            let date = archive?.date ?? Clock.now
            let info: [(key: String, value: String)] = [
                ("Title", metadata.title), ("Producer", PDFMetadata.producer), ("Creator", PDFMetadata.producer),
                ("CreationDate", PDFMetadata.pdfDate(date)), ("ModDate", PDFMetadata.pdfDate(date)),
            ] + PDFMetadata.infoEntries(metadata.document)
            let merged = "\(directory)/\(prefix)-merged.pdf"
            defer { unlink(merged) }
            do {
                if pageCount > 1 { try QPDF.merge((0..<pageCount).map(pagePath), into: merged) }
                try QPDF.setMetadata(pageCount > 1 ? merged : pagePath(0), into: output, info: info,
                                     xmp: archive.map {
                                         PDFMetadata.xmp(title: metadata.title, date: $0.date,
                                                         author: metadata.document.creator.isEmpty ? nil : metadata.document.creator,
                                                         document: metadata.document)
                                     },
                                     outputIntent: archive.map {
                                         OutputIntent(profile: $0.iccProfile, components: 3, identifier: "sRGB", info: "sRGB IEC61966-2.1")
                                     })
            } catch {
                throw DocumentPDFError(message: "cannot merge \(pageCount) PDF page\(pageCount == 1 ? "" : "s"): \(error.message)")
            }
            return nil
        }
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
        return nil
    }

    private func pagePath(_ index: Int) -> String { "\(directory)/\(prefix)-\(index).pdf" }

    private func removePages() {
        for index in 0..<pageCount { unlink(pagePath(index)) }
        pageCount = 0
        sourcePages = []
    }
}
