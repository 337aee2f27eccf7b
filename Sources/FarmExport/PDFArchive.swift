import FarmCore
import FarmRender
import FarmRuntime
import QPDF
#if canImport(Glibc)
import Glibc
#endif

/// How a document that holds a PDF's own pages became PDF/A-2B, or why it did not.
public struct PDFArchiveOutcome: Sendable {
    /// `metadata`: XMP and the output intent added, every stream kept byte for byte; `ghostscript`: the content
    /// converted by Ghostscript's pdfwrite first (fonts embedded, transparency flattened), then the same metadata.
    public enum Method: String, Sendable { case metadata, ghostscript }

    public let method: Method
    /// Why Ghostscript was needed (what the document had that PDF/A forbids).
    public let converted: [ArchivalProblem]
    /// What still keeps the written file from being PDF/A-2B (empty: it is). The file is written either way, with
    /// no PDF/A claim when this is not empty.
    public let remaining: [ArchivalProblem]

    public var isArchival: Bool { remaining.isEmpty }
}

/// Makes a PDF that holds pages of PDFs ocrfarm did not write (a document that came in as a PDF, with ocrfarm's
/// text laid over its pages) PDF/A-2B, as OCRmyPDF does: qpdf adds XMP metadata and the sRGB output intent, and
/// every stream stays byte-identical (the page images as they were). A page with something PDF/A forbids (a font
/// not embedded, transparency, LZW) is converted by Ghostscript's pdfwrite first (`gs -dPDFA=2`, that page only:
/// fonts embedded, or replaced by the metric-compatible URW fonts it ships; transparency flattened at 300 dpi;
/// JPEG images passed through, others re-encoded losslessly), and the page takes the converted content, keeping
/// its annotations, links and place in the outline. What is still wrong after that is returned, and the file
/// then claims nothing (a plain PDF, never a false claim).
public enum PDFArchive {
    /// Where Debian's Ghostscript is; `OCRFARM_GHOSTSCRIPT` names another (or, naming no file, none: the
    /// documents that need converting are then written as plain PDFs, with warnings).
    static var ghostscriptPaths: [String] {
        if let chosen = getenv("OCRFARM_GHOSTSCRIPT").map({ String(cString: $0) }), !chosen.isEmpty { return [chosen] }
        return ["/usr/bin/gs", "/usr/local/bin/gs"]
    }

    /// Writes `input` as a PDF/A-2B file at `output` (they may not be the same path). `title` is the title when the
    /// document's `/Info` has none. `document`'s fields, where set, take the place of the document's own (title,
    /// author) and are added to `/Info` and XMP (`PDFMetadata.infoEntries`). Throws only when neither file can be
    /// read or written.
    public static func make(_ input: String, into output: String, title: String,
                            document: DocumentMetadata = DocumentMetadata()) throws(DocumentPDFError) -> PDFArchiveOutcome {
        let profile: PDFAProfile
        switch PDFAProfile.current() {
        case .success(let found): profile = found
        case .failure(let error): throw DocumentPDFError(message: error.message)
        }
        let problems: [ArchivalProblem]
        var found: [String: String]
        do {
            problems = try QPDF.archivalProblems(input)
            found = try QPDF.documentInfo(input)
        } catch {
            throw DocumentPDFError(message: "cannot read \(input): \(error.message)")
        }
        for (key, value) in PDFMetadata.infoEntries(document) { found[key] = value }
        let documentTitle = document.title.isEmpty ? found["Title"] ?? title : document.title
        var info: [(key: String, value: String)] = [
            ("Title", documentTitle), ("Producer", PDFMetadata.producer), ("Creator", PDFMetadata.producer),
            ("CreationDate", PDFMetadata.pdfDate(profile.date)), ("ModDate", PDFMetadata.pdfDate(profile.date)),
        ]
        for key in ["Author", "Subject", "Keywords", "Date", "Identifier", "Shelfmark"] {
            if let value = found[key] { info.append((key, value)) }
        }

        // Only the pages with a problem are converted, and only their content replaced: the others keep their bytes.
        let pages = Array(Set(problems.compactMap(\.page))).sorted()
        var remaining = problems.filter { $0.page == nil }
        var method = PDFArchiveOutcome.Method.metadata
        let convertedPath = output + ".gs.pdf"
        defer { unlink(convertedPath) }
        var converted: (path: String, pages: [(page: Int, convertedPage: Int)])?
        if !pages.isEmpty {
            switch ghostscript(input, pages: pages, into: convertedPath) {
            case .success:
                method = .ghostscript
                converted = (convertedPath, pages.enumerated().map { (page: $0.element, convertedPage: $0.offset) })
            case .failure(let error):
                remaining += problems.filter { $0.page != nil }
                    .map { ArchivalProblem(page: $0.page, reason: "\($0.reason) (not converted: \(error.message))") }
            }
        }
        do {
            if remaining.isEmpty {
                try QPDF.archiving(input, into: output, info: info,
                                   xmp: PDFMetadata.xmp(title: documentTitle, date: profile.date, author: found["Author"],
                                                        subject: found["Subject"], keywords: found["Keywords"], document: document),
                                   outputIntent: OutputIntent(profile: profile.iccProfile, components: 3, identifier: "sRGB",
                                                              info: "sRGB IEC61966-2.1"),
                                   converted: converted)
                // What the conversion left (a font Ghostscript could not embed, a mask it kept).
                remaining = try QPDF.archivalProblems(output)
            }
            if !remaining.isEmpty {
                // No claim: a plain PDF (the source's own XMP, which may claim PDF/A, removed with the rest).
                try QPDF.setMetadata(input, into: output, info: info, xmp: nil, outputIntent: nil)
            }
        } catch {
            throw DocumentPDFError(message: "cannot write \(output): \(error.message)")
        }
        return PDFArchiveOutcome(method: method, converted: method == .ghostscript ? problems.filter { $0.page != nil } : [],
                                 remaining: remaining)
    }

    /// Ghostscript's pdfwrite with PDF/A-2 rules, as OCRmyPDF runs it: colours left as they are (the sRGB output
    /// intent is added afterwards), pages not turned, images not re-compressed lossily, transparency flattened.
    /// `pages` (from 0, ascending) are the pages converted, in that order.
    static func ghostscript(_ input: String, pages: [Int], into output: String) -> Result<Void, DocumentPDFError> {
        guard let gs = ghostscriptPaths.first(where: FileSystem.exists) else {
            return .failure(DocumentPDFError(message: "Ghostscript is not installed at \(ghostscriptPaths.joined(separator: " or ")) (Debian: ghostscript)"))
        }
        let folder: String
        do {
            folder = try FileSystem.makeTemporaryDirectory(prefix: "ocrfarm-gs")
        } catch {
            return .failure(DocumentPDFError(message: "\(error)"))
        }
        defer { FileSystem.remove(folder) }
        let arguments = [
            "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=pdfwrite", "-dPDFA=2", "-dPDFACompatibilityPolicy=1",
            "-sColorConversionStrategy=LeaveColorUnchanged", "-dHaveTransparency=false", "-r300", "-dAutoRotatePages=/None",
            "-dAutoFilterColorImages=false", "-dColorImageFilter=/FlateEncode", "-dAutoFilterGrayImages=false",
            "-dGrayImageFilter=/FlateEncode", "-dDownsampleColorImages=false", "-dDownsampleGrayImages=false",
            "-dDownsampleMonoImages=false", "-sPageList=" + pages.map { String($0 + 1) }.joined(separator: ","),
            "-sOutputFile=" + output, input,
        ]
        let status: Int32
        // A page Ghostscript cannot finish (a hostile or broken file) costs the document its claim, never the export.
        let limit = max(120, 60 * pages.count)
        do {
            let child = try ChildProcess(executable: gs, arguments: arguments, outputPath: folder + "/out.txt")
            guard let finished = child.wait(milliseconds: limit * 1000) else {
                child.signal(SIGKILL)
                _ = child.wait()
                return .failure(DocumentPDFError(message: "Ghostscript took longer than \(limit) s"))
            }
            status = finished
        } catch {
            return .failure(DocumentPDFError(message: "cannot run Ghostscript: \(error)"))
        }
        guard status == 0, FileSystem.exists(output) else {
            let said = ((try? FileSystem.readText(folder + "/out.txt")) ?? "").split(separator: "\n").last.map(String.init)
            return .failure(DocumentPDFError(message: "Ghostscript failed (\(said ?? "exit status \(status)"))"))
        }
        return .success(())
    }
}
