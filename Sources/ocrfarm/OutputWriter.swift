import FarmCore
import FarmPipeline
#if canImport(Glibc)
import Glibc
#endif

/// Streams the pages of `ocrfarm ocr` into one output (standard output or a file), in the chosen format.
/// A file is written under a temporary name and renamed when complete, so a reader never sees half of it.
final class OutputWriter {
    private let format: OutputFormat
    private let path: String?
    private let descriptor: Int32
    private let temporaryPath: String?
    private var pagesWritten = 0
    private var pdfPages: [String] = []
    private var pdfDirectory: String?
    private var finished = false
    private var writeError: Int32?

    init(format: OutputFormat, path: String?) throws {
        self.format = format
        self.path = path
        if let path {
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
        case .hocr: emit(DocumentAssembly.hocrHeader)
        case .alto: emit(DocumentAssembly.altoHeader(sourceName: path ?? "stdout"))
        case .pdf: pdfDirectory = try FileSystem.makeTemporaryDirectory(prefix: "ocrfarm-pdf")
        case .text: break
        }
    }

    deinit {
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
            var fields: [(String, JSON)] = [("source", JSON(report.path)), ("page", JSON(report.page + 1))]
            switch report.outcome {
            case .success(let page):
                if case .object(let resultFields) = page.result.json { fields += resultFields }
            case .failure(let failure):
                fields.append(("error", .object([("code", JSON(failure.code.rawValue)), ("stage", JSON(failure.stage)),
                                                 ("message", JSON(failure.message))])))
            }
            emit((pagesWritten > 0 ? ",\n" : "") + JSON.object(fields).rendered)
            pagesWritten += 1
        case .hocr, .alto:
            guard case .success(let page) = report.outcome, let fragment = page.renderings[format] else { return }
            emit(bytes: fragment)
        case .pdf:
            guard case .success(let page) = report.outcome, let pdf = page.renderings[.pdf], let pdfDirectory else { return }
            let pagePath = "\(pdfDirectory)/\(pdfPages.count).pdf"
            do {
                try FileSystem.write(pdf, to: pagePath)
                pdfPages.append(pagePath)
            } catch {
                Console.error("ocrfarm: \(report.path): cannot keep the PDF page: \(error)")
            }
        }
    }

    func finish() throws {
        switch format {
        case .json: emit("\n]}\n")
        case .hocr: emit(DocumentAssembly.hocrFooter)
        case .alto: emit(DocumentAssembly.altoFooter)
        case .pdf: try finishPDF()
        case .text: break
        }
        if let writeError {
            throw CommandFailure(.ioError, "cannot write \(path ?? "standard output"): \(String(cString: strerror(writeError)))")
        }
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

    private func finishPDF() throws {
        guard let pdfDirectory, !pdfPages.isEmpty else { return }
        let document: String
        if pdfPages.count == 1 {
            document = pdfPages[0]
        } else {
            document = pdfDirectory + "/document.pdf"
            do {
                try DocumentAssembly.mergePDFs(pdfPages, into: document)
            } catch {
                throw CommandFailure(.software, "cannot merge the PDF pages: \(error.message)")
            }
        }
        let bytes = try FileSystem.read(document)
        emit(bytes: bytes)
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
