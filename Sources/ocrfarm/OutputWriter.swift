import FarmCore
import FarmExport
import FarmPipeline
import FarmRender
#if canImport(Glibc)
import Glibc
#endif

/// Streams the pages of `ocrfarm ocr` into one output (standard output or a file), in the chosen format.
/// A file is written under a temporary name and renamed when complete, so a reader never sees half of it.
final class OutputWriter {
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
    /// A PDF/A-2B document could not be made one (said on standard error; `ocr` exits 10).
    private(set) var notArchival = false
    private var writeError: Int32?
    private let languages: [String]
    /// PAGE XML holds one page per document: pages wait here until the end.
    private var pageDocuments: [(name: String, xml: String)] = []

    /// Who made the document: ocrfarm with the engine the pages are read by.
    private let creator: DocumentCreator
    private var system: String { creator.software }

    /// The one-page documents the pages are to come with: a format that needs the page image (the PDF) is merged
    /// from the pages' own documents; the others are written here from the result model, one document for all.
    var pageRenderings: [OutputFormat] { format.needsPageImage ? [format] : [] }

    init(format: OutputFormat, path: String?, languages: [String] = ["eng"], pdfType: PDFType = .pdfa2b,
         replacingEarlier: Bool = false, engine: ReadingEngine = .tesseract) throws {
        creator = Engines.documentCreator(for: engine)
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
                throw CommandFailure(.cannotCreate, "cannot write \(path): \(String(cString: strerror(errno)))")
            }
            descriptor = fd
            temporaryPath = nil
            inPlace = true
        } else if let path {
            let temporary = path + ".partial-\(getpid())"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw CommandFailure(.cannotCreate, "cannot write \(path): \(String(cString: strerror(errno)))")
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

    func add(_ report: PageReport) {
        switch format {
        case .text:
            guard case .success(let page) = report.outcome else { return }
            // Like Tesseract's text renderer: a form feed between pages, none after the last.
            emit((pagesWritten > 0 ? "\u{0C}" : "") + page.result.text)
            pagesWritten += 1
        case .json:
            let document = switch report.outcome {
            case .success(let page): PageArtifacts.json(source: report.path, page: report.page + 1, result: page.result)
            case .failure(let failure): PageArtifacts.json(source: report.path, page: report.page + 1, failure: failure)
            }
            emit((pagesWritten > 0 ? ",\n" : "") + document.rendered)
            pagesWritten += 1
        case .hocr, .alto, .page:
            guard case .success(let page) = report.outcome else { return }
            pagesWritten += 1
            let exported = ExportPage(result: page.result, imageName: report.path, number: pagesWritten,
                                      languages: PageArtifacts.described(languages, page.result))
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
            guard case .success(let page) = report.outcome, let rendering = page.rendering(.pdf), let pdf else { return }
            do {
                try pdf.append(rendering, sourcePage: report.isPDF ? report.page : nil)
                if pdfTitle == nil { pdfTitle = report.path }
                if report.isPDF { hasPDFPages = true }
            } catch {
                Console.error("ocrfarm: \(report.path): \(error.message)")
            }
        }
    }

    func finish() throws {
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
            throw CommandFailure(.ioError, "cannot write \(path ?? "standard output"): \(String(cString: strerror(writeError)))")
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
                throw CommandFailure(.ioError, "cannot write \(path): \(reason)")
            }
        }
    }

    /// ALTO names one source image per document: the first page's (each `Page` has its number).
    private func emitALTOHeader(imageName: String) {
        emit(ALTO.header(imageName: imageName, software: "ocrfarm",
                         version: creator.version))
    }

    /// One page: the PAGE document itself. Several: one file each in the folder given by --out.
    private func finishPAGE() throws {
        if descriptor < 0, let path {
            for document in pageDocuments {
                do {
                    try FileSystem.write(document.xml, to: path + "/" + document.name)
                } catch {
                    throw CommandFailure(.ioError, "cannot write \(path)/\(document.name): \(error)")
                }
            }
            finished = true
            return
        }
        guard pageDocuments.count <= 1 else {
            throw CommandFailure(.usage, "PAGE XML holds one page per file: give --out an existing folder for \(pageDocuments.count) pages")
        }
        if let document = pageDocuments.first { emit(document.xml) }
    }

    /// `scan.tif` page 3 → `scan-3.xml`; a single-page file → `scan.xml`.
    private func pageFileName(_ report: PageReport) -> String {
        var stem = FileSystem.baseName(report.path)
        if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = String(stem[..<dot]) }
        return report.page > 0 || report.pageCount > 1 ? "\(stem)-\(report.page + 1).xml" : "\(stem).xml"
    }

    private func finishPDF() throws {
        guard let pdf, let pdfDirectory, pdf.pageCount > 0 else { return }
        defer { pdfEmitted = true }
        let document = pdfDirectory + "/document.pdf"
        if oneSource, let source = pdfSource, pdfPagesSeen == source.pageCount {
            do {
                let outcome = try pdf.overlay(try FileSystem.read(source.path), name: source.path, into: document,
                                              replacingEarlier: replacingEarlier, type: pdfType, title: source.path)
                report(outcome, source: source.path)
                emit(bytes: try FileSystem.read(document))
                return
            } catch {
                Console.error("ocrfarm: \(source.path): \(error); the PDF is merged from its pages instead, without the file's "
                              + "outline and document metadata")
            }
        }
        do {
            // One page of an image keeps its own metadata (made with the page); several, or a PDF's page, get the
            // document's (PDF/A-2B made by `PDFArchive` when a page is a PDF's own).
            let outcome = try pdf.merge(into: document, metadata: pdf.pageCount > 1 || hasPDFPages
                                        ? DocumentPDF.Metadata(title: pdfTitle ?? "ocrfarm", type: pdfType) : nil)
            report(outcome, source: path ?? "the PDF")
        } catch {
            throw CommandFailure(.software, error.message)
        }
        let bytes = try FileSystem.read(document)
        emit(bytes: bytes)
    }

    /// Says loudly when a PDF/A-2B document could not be made one (each problem with its page), and quietly
    /// (with `--verbose`-free brevity: one line) when Ghostscript had to convert its content.
    private func report(_ outcome: PDFArchiveOutcome?, source: String) {
        guard let outcome else { return }
        let output = path ?? "standard output"
        if !outcome.isArchival {
            notArchival = true
            for problem in outcome.remaining {
                Console.error("ocrfarm: warning: \(source): \(problem): \(output) is not PDF/A-2B (written as a plain PDF)")
            }
        } else if outcome.method == .ghostscript {
            let why = outcome.converted.prefix(3).map(\.description).joined(separator: "; ")
            Console.error("ocrfarm: \(source): converted by Ghostscript for PDF/A-2B (\(why)\(outcome.converted.count > 3 ? "; …" : ""))")
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
