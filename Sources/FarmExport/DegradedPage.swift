import FarmCore
import FarmRender
import FarmRuntime
import FarmStore
import Leptonica
import QPDF
#if canImport(Glibc)
import Glibc
#endif

/// The PDF page that stands in for a page that failed for good, so an exported document keeps its page count.
///
/// The page's source is read here, in the exporting process, the way the coordinator reads it before a job leaves
/// (a regular file, not through a symbolic link, within the size a job may carry, and the same size and SHA-256 as
/// when it was submitted), so an export never shows a file that was swapped after submit. When it passes and its
/// page decodes, the page is that image with no text layer (for a PDF source, its own page, taken out with qpdf);
/// otherwise a placeholder page that says which page it is, how it failed, and why its image is not shown either.
struct DegradedPage {
    enum Kind: Sendable, Equatable {
        /// The page's image (or, for a PDF source, its original page), without text.
        case image
        /// A page of text saying why the page is missing.
        case placeholder(reason: String)
    }

    let pdf: [UInt8]
    let kind: Kind

    /// Largest source file read (the coordinator's default for what a job may carry).
    static let maxSourceBytes = 64 << 20
    /// Largest image decoded (the workers' default --max-pixels).
    static let maxPixels = 100_000_000

    /// The stand-in for `page` (number `page.number` of `documentName`). `pdfPages` splits PDF sources (and keeps the
    /// last one split, for the next failed page of the same file).
    ///
    /// For PDF/A-2B (`type`) the page carries the sRGB output intent and XMP (the merged document's replace them)
    /// and the placeholder's text is in an embedded font (DejaVu Sans Mono, the glyphs shown). Without the profile or the font installed, the page is still made, as a plain PDF
    /// page: a document keeps its page count before it keeps its conformance.
    static func make(for page: PageRecord, source: SourceRef?, documentName: String, pdfPages: SourcePDFPages,
                     type: PDFType = .pdfa2b) -> DegradedPage
    {
        let archive = type == .pdfa2b ? try? PDFAProfile.current().get() : nil
        let failure = (page.failureCode ?? "failed") + (page.failureMessage.map { ": " + $0 } ?? "")
        let title = "\(documentName) page \(page.number) (not read: \(page.failureCode ?? "failed"))"
        let why: String
        if let source {
            switch shown(source, title: title, pdfPages: pdfPages, archive: archive) {
            case .success(let pdf): return DegradedPage(pdf: pdf, kind: .image)
            case .failure(let reason): why = reason.message
            }
        } else {
            why = "the store has no source for this page"
        }
        // The page goes into an archive others read: the file by its name, not the host's folders, and the reasons
        // without the decoder library's own messages (issue 36).
        let lines = [
            "ocrfarm: page \(page.number) of \(documentName) could not be read.",
            "",
            "Page \(page.number) failed for good: \(archival(failure, source: source?.path))",
            "",
            "Its image is not shown either: \(archival(why, source: source?.path))",
            "",
            "Source: \(source.map { FileSystem.baseName($0.path.description) + ($0.kind == .invalid ? "" : ", page \($0.index + 1) of the file") } ?? "unknown")",
        ] + (source?.kind == .invalid ? [] : ["Retry it with: ocrfarm requeue --failed --page \(page.id.rawValue)"])
        let font = type == .pdfa2b ? placeholderFont : nil
        return DegradedPage(pdf: SearchablePDF.placeholder(lines, title: title, font: font, archive: archive) { try? Zlib.compress($0) },
                            kind: .placeholder(reason: why))
    }

    struct Reason: Error { let message: String }

    /// `message` as the placeholder prints it: the source's path as its file name, and Leptonica's own messages,
    /// which the reason carries in parentheses ("(pixReadStreamJpeg: read error at scanline 574; nwarn = 2; …)"),
    /// left out.
    static func archival(_ message: String, source: RawPath?) -> String {
        var text = message
        if let path = source?.description, path.contains("/") { text = text.replacing(path, with: FileSystem.baseName(path)) }
        return text.replacing(#/ \([^()]*\bpix[A-Za-z]+:[^()]*\)/#, with: "")
    }

    /// The source page as a PDF page without text, or why it cannot be.
    /// The font of the placeholder's text, read once (nil when fonts-dejavu-core is not installed).
    static let placeholderFont: TrueTypeFont? = {
        let path = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
        return (try? FileSystem.read(path, limit: 4 << 20)).flatMap { TrueTypeFont($0, name: "DejaVuSansMono") }
    }()

    private static func shown(_ source: SourceRef, title: String, pdfPages: SourcePDFPages, archive: PDFAProfile?)
        -> Result<[UInt8], Reason>
    {
        guard source.kind != .invalid else { return .failure(Reason(message: "the file is not a page (refused at submit)")) }
        if source.kind == .pdf, let pages = pdfPages.pages(of: source) { return page(source.index, of: pages) }
        let bytes: [UInt8]
        switch checkedSource(source) {
        case .success(let read): bytes = read
        case .failure(let reason): return .failure(reason)
        }
        switch source.kind {
        case .pdf: return pdfPages.split(bytes, of: source).flatMap { page(source.index, of: $0) }
        default: return image(bytes, index: source.index, title: title, archive: archive)
        }
    }

    /// The bytes of `source`'s file as it was submitted, or why not: read by the one reader of a page's file
    /// (`SourceRef.read`: no link, a regular file, within `maxSourceBytes`, the size and SHA-256 the store kept).
    static func checkedSource(_ source: SourceRef) -> Result<[UInt8], Reason> {
        do throws(SourceError) {
            return .success(try source.read(limit: maxSourceBytes).bytes)
        } catch {
            return .failure(Reason(message: error.message))
        }
    }

    private static func image(_ bytes: [UInt8], index: Int, title: String, archive: PDFAProfile?) -> Result<[UInt8], Reason> {
        do throws(LeptonicaError) {
            let decoded = try Pix(encoded: bytes, page: index, maxPixels: maxPixels)
            var shown = decoded
            // What the PDF image writer takes: no alpha, and 1, 8 or 32 bits (or a colormap).
            if shown.depth == 32 && shown.samplesPerPixel == 4 { shown = try shown.removingAlpha() }
            if !shown.hasColormap && (shown.depth == 16 || shown.depth == 2 || shown.depth == 4) { shown = try shown.grayscale() }
            let compressed = try shown.compressedForPDF()
            let filter: PDFImage.Filter = switch compressed.encoding {
            case .jpeg: .dct
            case .jpeg2000: .jpx
            case .group4: .ccittFax
            case .flate: .flate
            }
            let image = PDFImage(data: compressed.bytes, filter: filter, width: compressed.width, height: compressed.height,
                                 bitsPerComponent: compressed.bitsPerComponent, components: compressed.components,
                                 palette: compressed.palette, predictor: compressed.predictor)
            let declared = decoded.resolution.y
            return .success(SearchablePDF.imageOnly(image, resolution: (70...2400).contains(declared) ? declared : 300,
                                                    title: title, archive: archive) { try? Zlib.compress($0) })
        } catch {
            return .failure(Reason(message: "its image cannot be decoded: \(error.message)"))
        }
    }

    private static func page(_ index: Int, of pages: [String]) -> Result<[UInt8], Reason> {
        guard pages.indices.contains(index) else {
            return .failure(Reason(message: "the PDF has \(pages.count) pages, not \(index + 1)"))
        }
        do {
            return .success(try FileSystem.read(pages[index]))
        } catch {
            return .failure(Reason(message: "\(error.path): \(error.reason)"))
        }
    }
}

/// The pages of the last PDF source split for degraded pages, one file each, so a volume with several failed pages
/// is split once. Split from the copy that passed the hash check, so what is shown is what was checked. Owns its
/// scratch folder (inside the export's staging folder), removed when the next source is split and in `deinit`.
/// Confined to one thread.
final class SourcePDFPages {
    private let folder: String
    private var source: SourceRef?
    private var files: [String] = []

    init(scratch: String, name: String) { folder = scratch + "/" + name }

    deinit { FileSystem.remove(folder) }

    /// The page files of `source` when it is the one split last (the same file, content hash and size).
    func pages(of source: SourceRef) -> [String]? {
        guard let split = self.source, split.path == source.path, split.hash == source.hash, split.size == source.size,
              source.hash != nil
        else { return nil }
        return files
    }

    /// Splits `bytes` (the checked content of `source`) into page files.
    func split(_ bytes: [UInt8], of source: SourceRef) -> Result<[String], DegradedPage.Reason> {
        FileSystem.remove(folder)
        self.source = nil
        files = []
        do {
            try FileSystem.makeDirectory(folder, mode: 0o700)
            try FileSystem.write(bytes, to: folder + "/source.pdf")
            files = try QPDF.splitPages(folder + "/source.pdf", into: folder)
            self.source = source
            return .success(files)
        } catch let error as QPDFError {
            return .failure(DegradedPage.Reason(message: "qpdf cannot take the page out of the PDF: \(error.message)"))
        } catch let error as FileError {
            return .failure(DegradedPage.Reason(message: "\(error.path): \(error.reason)"))
        } catch {
            return .failure(DegradedPage.Reason(message: "\(error)"))
        }
    }
}
