import FarmCore
import FarmRender
#if canImport(Glibc)
import Glibc
#endif
import FarmRuntime

/// One page read for `OutputWriter`: its file, its place in it and how its reading ended.
public struct OutputPage: Sendable {
    public let path: String
    /// Page within the file, from 0.
    public let page: Int
    public let pageCount: Int
    /// Whether the page is a PDF's (its PDF rendering is that page with text added, not a page made by ocrfarm).
    public let isPDF: Bool
    public let outcome: Result<PageResult, PageFailure>
    /// The page's one-page PDF, when it was rendered (`OutputWriter.pageRenderings`).
    public let pdf: [UInt8]?

    public init(path: String, page: Int, pageCount: Int, isPDF: Bool, outcome: Result<PageResult, PageFailure>, pdf: [UInt8]?) {
        self.path = path
        self.page = page
        self.pageCount = pageCount
        self.isPDF = isPDF
        self.outcome = outcome
        self.pdf = pdf
    }
}

/// Why the output could not be written.
public struct OutputError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// The output file cannot be made.
        case cannotCreate
        /// Writing or renaming it failed.
        case write
        /// PAGE XML of several pages needs a folder (one file per page).
        case needsFolder
        /// The PDF could not be made: its pages could not be merged, or the merged file read back.
        case pdf
    }

    public let kind: Kind
    public let message: String
    public var description: String { message }
}

/// Streams the pages of `ocrfarm ocr` into one output (standard output or a file), in the chosen format: text
/// pages separated by form feeds, JSON's `{"pages": [...]}`, one hOCR or ALTO document of every page, PAGE XML one
/// file per page into a folder, and one PDF (the source PDF with the text laid over it when every page is its,
/// else merged from the pages' one-page PDFs).
/// A file is written under a temporary name and renamed when complete, so a reader never sees half of it.
/// Owns its output descriptor (a device's, closed in deinit) and a temporary folder for the PDF (removed in
/// deinit). Confined to one thread; warnings go to `warn` as they happen.
public final class OutputWriter {
    private let format: OutputFormat
    private let path: String?
    private let descriptor: Int32
    /// True when `path` is a device or FIFO, written through its own descriptor (closed in deinit), not renamed.
    private var inPlace = false
    private let temporaryPath: String?
    private var pagesWritten = 0
    private var pdf: DocumentPDF?
    private var pdfDirectory: String?
    private let pdfType: PDFType
    /// The merged PDF's title: the first page's file.
    private var pdfTitle: String?
    /// Whether a page came from a PDF: such a page is the source's own, which may not be PDF/A, so the merged
    /// document claims nothing (a single one keeps its source's catalog, and any claim the source made).
    private var hasPDFPages = false
    /// The PDF every page so far came from (and its page count), while there is one: the output is then that file
    /// with the text added (`DocumentPDF.overlay`), keeping its outline and metadata, rather than a merge of pages.
    private var pdfSource: (path: String, pageCount: Int)?
    private var oneSource = true
    private var pdfPagesSeen = 0
    /// `--pdf-text redo`: the text layers an earlier run added are replaced.
    private let replacingEarlier: Bool
    private var finished = false
    /// Whether `finishPDF` wrote the document (it writes none when no page was read).
    private var pdfEmitted = false
    /// A PDF/A-2B document could not be made one (said in a warning; `ocr` exits 10).
    public private(set) var notArchival = false
    private var writeError: Int32?
    private let languages: [String]
    /// PAGE XML holds one page per document: pages wait here until the end.
    private var pageDocuments: [(name: String, xml: String)] = []

    /// Who made the document: ocrfarm with the engine the pages are read by.
    private let creator: DocumentCreator
    private var system: String { creator.software }
    private let warn: (String) -> Void

    /// The one-page documents the pages are to come with: a format that needs the page image (the PDF) is merged
    /// from the pages' own documents; the others are written here from the result model, one document for all.
    public var pageRenderings: [OutputFormat] { format.needsPageImage ? [format] : [] }

    /// Opens the output: the file at `path` (under a temporary name), a device or FIFO in place, or standard
    /// output when nil; PAGE XML into `path` when it is a folder.
    public init(format: OutputFormat, path: String?, languages: [String] = ["eng"], pdfType: PDFType = .pdfa2b,
                replacingEarlier: Bool = false, creator: DocumentCreator, warn: @escaping (String) -> Void) throws {
        self.creator = creator
        self.warn = warn
        self.format = format
        self.replacingEarlier = replacingEarlier
        self.pdfType = pdfType
        self.path = path
        self.languages = languages
        if format == .page, let path, FileSystem.isDirectory(path) {
            // One PAGE file per page, into the folder.
            descriptor = -1
            temporaryPath = nil
            return
        }
        if let path, (try? FileSystem.status(path))?.kind == .other {
            // A device or a FIFO (/dev/stdout, /dev/tty, a named pipe) is written in place: a file renamed over it
            // would replace the device node itself (issue 36: `--out /dev/stdout` made /dev/stdout a plain file).
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw OutputError(kind: .cannotCreate, message: "cannot write \(path): \(String(cString: strerror(errno)))")
            }
            descriptor = fd
            temporaryPath = nil
            inPlace = true
        } else if let path {
            let temporary = path + ".partial-\(getpid())"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw OutputError(kind: .cannotCreate, message: "cannot write \(path): \(String(cString: strerror(errno)))")
            }
            descriptor = fd
            temporaryPath = temporary
        } else {
            descriptor = 1
            temporaryPath = nil
        }
        switch format {
        case .json: emit("{\"pages\":[\n")
        case .hocr: emit(HOCR.header(system: system))
        case .alto: break   // the header names the first page's image: written with it
        case .pdf:
            let directory = try FileSystem.makeTemporaryDirectory(prefix: "ocrfarm-pdf")
            pdfDirectory = directory
            pdf = DocumentPDF(directory: directory)
        case .text, .page: break
        }
    }

    deinit {
        if inPlace { close(descriptor) }
        pdf = nil
        if let pdfDirectory { FileSystem.remove(pdfDirectory) }
        if let temporaryPath, !finished {
            close(descriptor)
            unlink(temporaryPath)
        }
    }

    /// Adds one page; pages come in the order of the output.
    public func add(_ report: OutputPage) {
        switch format {
        case .text:
            guard case .success(let page) = report.outcome else { return }
            // Like Tesseract's text renderer: a form feed between pages, none after the last.
            emit((pagesWritten > 0 ? "\u{0C}" : "") + page.text)
            pagesWritten += 1
        case .json:
            let document = switch report.outcome {
            case .success(let page): PageArtifacts.json(source: report.path, page: report.page + 1, result: page)
            case .failure(let failure): PageArtifacts.json(source: report.path, page: report.page + 1, failure: failure)
            }
            emit((pagesWritten > 0 ? ",\n" : "") + document.rendered)
            pagesWritten += 1
        case .hocr, .alto, .page:
            guard case .success(let page) = report.outcome else { return }
            pagesWritten += 1
            let exported = ExportPage(result: page, imageName: report.path, number: pagesWritten,
                                      languages: PageArtifacts.described(languages, page))
            switch format {
            case .hocr: emit(HOCR.page(exported))
            case .alto:
                if pagesWritten == 1 { emitALTOHeader(imageName: report.path) }
                emit(ALTO.page(exported))
            default: pageDocuments.append((pageFileName(report), PAGEXML.document(exported, creator: system, created: Clock.now)))
            }
        case .pdf:
            pdfPagesSeen += 1
            if report.isPDF, pdfSource.map({ $0.path == report.path }) ?? true {
                pdfSource = (report.path, report.pageCount)
            } else {
                oneSource = false
            }
            guard case .success = report.outcome, let rendering = report.pdf, let pdf else { return }
            do {
                try pdf.append(rendering, sourcePage: report.isPDF ? report.page : nil)
                if pdfTitle == nil { pdfTitle = report.path }
                if report.isPDF { hasPDFPages = true }
            } catch {
                warn("ocrfarm: \(report.path): \(error.message)")
            }
        }
    }

    /// Ends the document and, for a file, renames it into place. No page read: no PDF is made.
    public func finish() throws(OutputError) {
        switch format {
        case .json: emit("\n]}\n")
        case .hocr: emit(HOCR.footer)
        case .alto:
            if pagesWritten == 0 { emitALTOHeader(imageName: "") }
            emit(ALTO.footer)
        case .pdf: try finishPDF()
        case .page: try finishPAGE()
        case .text: break
        }
        if let writeError {
            throw OutputError(kind: .write, message: "cannot write \(path ?? "standard output"): \(String(cString: strerror(writeError)))")
        }
        // No page was read: a PDF of no pages is no PDF, so no file is made (the temporary one goes in deinit) and
        // an existing file at --out is left as it was; the pages' errors and the exit status say why.
        if format == .pdf && !pdfEmitted { return }
        if let temporaryPath, let path {
            finished = true
            let closed = close(descriptor) == 0
            guard closed, rename(temporaryPath, path) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporaryPath)
                throw OutputError(kind: .write, message: "cannot write \(path): \(reason)")
            }
        }
    }

    /// ALTO names one source image per document: the first page's (each `Page` has its number).
    private func emitALTOHeader(imageName: String) {
        emit(ALTO.header(imageName: imageName, software: "ocrfarm",
                         version: creator.version))
    }

    /// One page: the PAGE document itself. Several: one file each in the folder given by --out.
    private func finishPAGE() throws(OutputError) {
        if descriptor < 0, let path {
            for document in pageDocuments {
                do {
                    try FileSystem.write(document.xml, to: path + "/" + document.name)
                } catch {
                    throw OutputError(kind: .write, message: "cannot write \(path)/\(document.name): \(error)")
                }
            }
            finished = true
            return
        }
        guard pageDocuments.count <= 1 else {
            throw OutputError(kind: .needsFolder,
                              message: "PAGE XML holds one page per file: give --out an existing folder for \(pageDocuments.count) pages")
        }
        if let document = pageDocuments.first { emit(document.xml) }
    }

    /// `scan.tif` page 3 → `scan-3.xml`; a single-page file → `scan.xml`.
    private func pageFileName(_ report: OutputPage) -> String {
        var stem = FileSystem.baseName(report.path)
        if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = String(stem[..<dot]) }
        return report.page > 0 || report.pageCount > 1 ? "\(stem)-\(report.page + 1).xml" : "\(stem).xml"
    }

    private func finishPDF() throws(OutputError) {
        guard let pdf, let pdfDirectory, pdf.pageCount > 0 else { return }
        defer { pdfEmitted = true }
        let document = pdfDirectory + "/document.pdf"
        // The PDF every page came from, page for page, when there is one.
        let whole = pdfSource.flatMap { oneSource && pdfPagesSeen == $0.pageCount ? $0.path : nil }
        do {
            let published = try pdf.publish(into: document, source: { () throws -> DocumentPDF.Source? in
                try whole.map { path in
                    DocumentPDF.Source(bytes: try FileSystem.read(path), name: path, replacingEarlier: replacingEarlier,
                                       type: pdfType, title: path)
                }
            }, refused: { reason in
                warn("ocrfarm: \(whole ?? "the PDF"): \(reason); the PDF is merged from its pages instead, without the file's "
                     + "outline and document metadata")
            }, metadata: {
                // One page of an image keeps its own metadata (made with the page); several, or a PDF's page, get the
                // document's (PDF/A-2B made by `PDFArchive` when a page is a PDF's own).
                pdf.pageCount > 1 || hasPDFPages ? DocumentPDF.Metadata(title: pdfTitle ?? "ocrfarm", type: pdfType) : nil
            })
            switch published {
            case .overlaid(let outcome): report(outcome, source: whole ?? "the PDF")
            case .merged(let outcome): report(outcome, source: path ?? "the PDF")
            }
            emit(bytes: try FileSystem.read(document))
        } catch let error as DocumentPDFError {
            throw OutputError(kind: .pdf, message: error.message)
        } catch {
            throw OutputError(kind: .pdf, message: "\(error)")
        }
    }

    /// Says loudly when a PDF/A-2B document could not be made one (each problem with its page), and quietly
    /// (with `--verbose`-free brevity: one line) when Ghostscript had to convert its content.
    private func report(_ outcome: PDFArchiveOutcome?, source: String) {
        guard let outcome else { return }
        let output = path ?? "standard output"
        if !outcome.isArchival {
            notArchival = true
            for problem in outcome.remaining {
                warn("ocrfarm: warning: \(source): \(problem): \(output) is not PDF/A-2B (written as a plain PDF)")
            }
        } else if outcome.method == .ghostscript {
            let why = outcome.converted.prefix(3).map(\.description).joined(separator: "; ")
            warn("ocrfarm: \(source): converted by Ghostscript for PDF/A-2B (\(why)\(outcome.converted.count > 3 ? "; …" : ""))")
        }
    }

    private func emit(_ text: String) { emit(bytes: Array(text.utf8)) }

    private func emit(bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                if writeError == nil { writeError = errno }
                return
            }
            offset += written
        }
    }
}
