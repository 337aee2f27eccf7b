import FarmCore
import FarmRender
import FarmRuntime
import Leptonica
import QPDF

/// An image drawn on a PDF page, as `pdfimages -list` reports it.
public struct PDFImageListing: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// The image's resolution as drawn on the page, pixels per inch across and down.
    public let xPPI: Int
    public let yPPI: Int
    /// Colour components (1: gray or black and white).
    public let components: Int

    public init(width: Int, height: Int, xPPI: Int, yPPI: Int, components: Int = 3) {
        self.width = width
        self.height = height
        self.xPPI = xPPI
        self.yPPI = yPPI
        self.components = components
    }

    /// The part of the page it covers, in square points.
    var coveredArea: Double {
        guard xPPI > 0, yPPI > 0 else { return 0 }
        return Double(width) / Double(xPPI) * 72 * Double(height) / Double(yPPI) * 72
    }
}

/// Renders a PDF page to an image with poppler's `pdftoppm`, at the resolution of the page's own images.
///
/// A scan wrapped in a PDF holds no more detail than its image: rendering a 96 dpi image at 300 dpi makes ten
/// times the pixels to decode and correct for nothing, and a large page at 300 dpi may pass the pixel limit
/// although its image does not. So a page mostly covered by an image is rendered at that image's resolution;
/// a page of vector text and drawings at `vectorResolution`. Either is capped at `maxResolution` and so the
/// rendering stays within the pixel limit.
public enum PDFRasterizer {
    public static let stage = "rasterize"
    /// For pages without a large image (vector text and drawings).
    public static let vectorResolution = 300
    public static let maxResolution = 600
    /// Below this an image is rendered at this resolution anyway (a thumbnail-sized image on a page).
    public static let minResolution = 72
    /// A page whose largest image covers at least this part of it is a picture of a page (a scan, a photo).
    public static let imagePageCoverage = 0.5
    /// What a colour page costs in memory at the stages, per pixel (`Decoder`'s budget: 81 MP needs 1134 MB).
    public static let bytesPerPixel = 14

    /// A rendered page: PNM bytes (PPM, or PGM for a gray page) and the resolution they were rendered at.
    public struct Rendering: Sendable {
        public let image: [UInt8]
        public let resolution: Int
        /// The errors pdftoppm reported while drawing the page (a damaged page is drawn as far as it goes).
        public var drawingErrors: [String] = []
    }

    /// The resolution to render a page of `widthPoints` × `heightPoints` with `images` on it at.
    public static func resolution(images: [PDFImageListing], widthPoints: Double, heightPoints: Double,
                                  maxPixels: Int) -> Int
    {
        let pageArea = widthPoints * heightPoints
        var chosen = vectorResolution
        if pageArea > 0, let largest = images.max(by: { $0.width * $0.height < $1.width * $1.height }),
           largest.coveredArea >= imagePageCoverage * pageArea
        {
            chosen = max(minResolution, largest.xPPI, largest.yPPI)
        }
        chosen = min(chosen, maxResolution)
        if pageArea > 0 {
            // Pixels at r dpi: (w·r/72)·(h·r/72), so the limit allows r = 72·√(maxPixels / (w·h)).
            let fits = Int((72 * (Double(maxPixels) / pageArea).squareRoot()).rounded(.down))
            chosen = min(chosen, max(1, fits))
        }
        return chosen
    }

    /// Renders page `page` (from 0) of `pdf`, at the resolution of its images (`resolution(images:…)`).
    public static func rasterize(_ pdf: [UInt8], page: Int, maxPixels: Int = 100_000_000) throws(PageFailure) -> Rendering {
        let facts = try facts(pdf, page: page)
        return try withFile(pdf) { path throws(PageFailure) in
            let size = (width: facts.width, height: facts.height)
            let images = (try? imagesOnPage(path, page: page)) ?? []
            let dpi = resolution(images: images, widthPoints: size.width, heightPoints: size.height, maxPixels: maxPixels)
            // A page of gray images is rendered gray: a third of the pixels' bytes, and no colour is lost.
            let gray = !images.isEmpty && images.allSatisfy { $0.components == 1 }
            let drawn = try render(path, page: page, resolution: dpi, gray: gray)
            return Rendering(image: drawn.image, resolution: dpi, drawingErrors: drawn.errors)
        }
    }

    /// The text page `page` (from 0) has already, as the page's result: its size in points as shown (/Rotate
    /// applied), its words with their boxes (`pdftotext -bbox-layout`, from the top left) and the text made from
    /// them; nil when it has none: a scan, or a page of drawings. Text drawn invisibly over a scan (an earlier OCR)
    /// counts as text.
    public static func existingText(_ pdf: [UInt8], page: Int) throws(PageFailure) -> PageResult? {
        let facts = try facts(pdf, page: page)
        // A page without a font has no text: most scans, found without a poppler run.
        guard facts.hasFonts else { return nil }
        let turned = facts.rotation == 90 || facts.rotation == 270
        let width = Int((turned ? facts.height : facts.width).rounded()), height = Int((turned ? facts.width : facts.height).rounded())
        return try withFile(pdf) { path throws(PageFailure) in
            let output = path + ".html"
            _ = try runTool("pdftotext", ["-bbox-layout", "-enc", "UTF-8", "-f", String(page + 1), "-l", String(page + 1), path, output],
                            what: "cannot read the text of page \(page + 1)")
            defer { FileSystem.remove(output) }
            var result = PageResult(width: width, height: height, resolution: 72, text: "", meanConfidence: 100,
                                    blocks: PDFTextLayout.blocks((try? FileSystem.readText(output)) ?? "", width: width, height: height))
            result.text = TesseractRecognizer.text(of: result)
            return result.text.contains { !$0.isWhitespace } ? result : nil
        }
    }

    /// The visible box, /Rotate and fonts of page `page` (from 0) of `pdf` (qpdf, in this process).
    public static func facts(_ pdf: [UInt8], page: Int) throws(PageFailure) -> PDFPageFacts {
        do throws(QPDFError) {
            return try QPDF.pageFacts(pdf, name: "PDF", page: page)
        } catch {
            throw PageFailure(stage: stage, code: error.kind == .password ? .pdfEncrypted : .pdfFailed,
                              message: "page \(page + 1): \(error.message)")
        }
    }

    /// The images drawn on page `page` (from 0) of the PDF at `path`.
    public static func imagesOnPage(_ path: String, page: Int) throws(PageFailure) -> [PDFImageListing] {
        let listing = try runTool("pdfimages", ["-list", "-f", String(page + 1), "-l", String(page + 1), path])
        return parseImageList(listing)
    }

    /// The rows of `pdfimages -list`: page num type width height color comp bpc enc interp object ID x-ppi y-ppi …
    public static func parseImageList(_ listing: String) -> [PDFImageListing] {
        listing.split(separator: "\n").compactMap { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            // Soft masks and stencil masks are no picture of their own.
            guard fields.count >= 14, Int(fields[0]) != nil, fields[2] == "image",
                  let width = Int(fields[3]), let height = Int(fields[4]),
                  let x = Int(fields[12]), let y = Int(fields[13]) else { return nil }
            return PDFImageListing(width: width, height: height, xPPI: x, yPPI: y, components: Int(fields[6]) ?? 3)
        }
    }

    /// Renders a page as PNM (`PopplerRasterizer`, the one rasterizer of PDF pages).
    private static func render(_ path: String, page: Int, resolution: Int, gray: Bool)
        throws(PageFailure) -> (image: [UInt8], errors: [String])
    {
        do throws(PopplerRasterizer.Failure) {
            return try PopplerRasterizer.rasterizeTelling(path, page: page, size: .resolution(dpi: resolution, gray: gray))
        } catch {
            let what = "cannot rasterize page \(page + 1)"
            switch error {
            case .notInstalled:
                throw PageFailure(stage: stage, code: .pdfFailed, message: "pdftoppm is not installed (Debian: poppler-utils)",
                                  retryable: true)
            case .cannotRun(let reason):
                throw PageFailure(stage: stage, code: .internalError, message: reason.description, retryable: true)
            case .timedOut:
                throw PageFailure(stage: stage, code: .pdfFailed, message: what + ": pdftoppm took too long")
            case .failed(let status, let said):
                throw PageFailure(stage: stage, code: .pdfFailed, message: what + ": "
                                  + (status == 0 ? "pdftoppm wrote no image" : said ?? "pdftoppm exited with \(status)"))
            }
        }
    }

    /// Runs `body` with the PDF written to a temporary file, removed afterwards.
    private static func withFile<T>(_ pdf: [UInt8], _ body: (String) throws(PageFailure) -> T) throws(PageFailure) -> T {
        let folder: String
        do throws(FileError) {
            folder = try FileSystem.makeTemporaryDirectory(prefix: "ocrfarm-pdf")
        } catch {
            throw PageFailure(stage: stage, code: .internalError, message: error.description, retryable: true)
        }
        defer { FileSystem.remove(folder) }
        do throws(FileError) {
            try FileSystem.write(pdf, to: folder + "/in.pdf")
        } catch {
            throw PageFailure(stage: stage, code: .internalError, message: error.description, retryable: true)
        }
        return try body(folder + "/in.pdf")
    }

    /// Runs a poppler tool and returns its output (standard output and error together).
    static func runTool(_ name: String, _ arguments: [String], what: String? = nil) throws(PageFailure) -> String {
        guard let tool = PopplerRasterizer.toolPath(name) else {
            throw PageFailure(stage: stage, code: .pdfFailed, message: "\(name) is not installed (Debian: poppler-utils)",
                              retryable: true)
        }
        let folder: String
        do throws(FileError) {
            folder = try FileSystem.makeTemporaryDirectory(prefix: "ocrfarm-poppler")
        } catch {
            throw PageFailure(stage: stage, code: .internalError, message: error.description, retryable: true)
        }
        defer { FileSystem.remove(folder) }
        let status: Int32
        do throws(FileError) {
            status = try ChildProcess(executable: tool, arguments: arguments, outputPath: folder + "/out.txt").wait()
        } catch {
            throw PageFailure(stage: stage, code: .internalError, message: error.description, retryable: true)
        }
        let output = (try? FileSystem.readText(folder + "/out.txt")) ?? ""
        guard status == 0 else {
            let reason = output.split(separator: "\n").last.map(String.init) ?? "\(name) exited with \(status)"
            throw PageFailure(stage: stage, code: .pdfFailed, message: (what ?? name) + ": " + reason)
        }
        return output
    }
}

/// A PDF that came in as a PDF, with the text read laid over its pages (`PDFOverlay`, `QPDF.addingText`): the pages
/// keep their own content, and no page is replaced by a picture of it.
public enum PDFTextOverlay {
    public static let stage = "render"
    /// The stage of a page kept with its own text (`--pdf-text skip`).
    public static let keptStage = "pdf-text"

    /// A PDF's page as the store keeps it (`addingText` with `onlyPage`), made PDF/A-2B when nothing on it needs
    /// converting: qpdf adds XMP metadata and the sRGB output intent, every stream kept byte for byte. A page
    /// PDF/A forbids as it is (a font not embedded, transparency) stays a plain PDF here, the finding says why;
    /// the exported document converts it with Ghostscript (FarmExport's `PDFArchive`), which a worker does not run.
    static func archived(_ page: [UInt8], title: String) throws(PageFailure) -> (pdf: [UInt8], finding: JSON) {
        let profile: PDFAProfile
        switch PDFAProfile.current() {
        case .success(let found): profile = found
        case .failure(let error): throw PageFailure(stage: stage, code: .internalError, message: error.message)
        }
        let folder: String
        do throws(FileError) {
            folder = try FileSystem.makeTemporaryDirectory(prefix: "ocrfarm-pdfa")
            try FileSystem.write(page, to: folder + "/page.pdf")
        } catch {
            throw PageFailure(stage: stage, code: .internalError, message: error.description, retryable: true)
        }
        defer { FileSystem.remove(folder) }
        do throws(QPDFError) {
            let problems = try QPDF.archivalProblems(folder + "/page.pdf")
            guard problems.isEmpty else {
                return (page, .object([("claimed", false), ("why", JSON(problems.map { $0.reason }.joined(separator: "; ")
                    + " (the exported document is converted by Ghostscript)"))]))
            }
            let found = try QPDF.documentInfo(folder + "/page.pdf")
            let documentTitle = found["Title"] ?? title
            var info: [(key: String, value: String)] = [
                ("Title", documentTitle), ("Producer", PDFMetadata.producer), ("Creator", PDFMetadata.producer),
                ("CreationDate", PDFMetadata.pdfDate(profile.date)), ("ModDate", PDFMetadata.pdfDate(profile.date)),
            ]
            for key in ["Author", "Subject", "Keywords"] { if let value = found[key] { info.append((key, value)) } }
            try QPDF.archiving(folder + "/page.pdf", into: folder + "/archived.pdf", info: info,
                               xmp: PDFMetadata.xmp(title: documentTitle, date: profile.date, author: found["Author"],
                                                    subject: found["Subject"], keywords: found["Keywords"]),
                               outputIntent: OutputIntent(profile: profile.iccProfile, components: 3, identifier: "sRGB",
                                                          info: "sRGB IEC61966-2.1"))
        } catch {
            throw PageFailure(stage: stage, code: .pdfFailed, message: "cannot make the page PDF/A-2B: \(error.message)")
        }
        do throws(FileError) {
            return (try FileSystem.read(folder + "/archived.pdf"), .object([("claimed", true)]))
        } catch {
            throw PageFailure(stage: stage, code: .internalError, message: error.description, retryable: true)
        }
    }

    /// The clockwise degrees that show a page upright: the orient stage's rotation when it turned the page (it
    /// does only on agreeing evidence), measured on the page as shown (its rendering has the /Rotate it had).
    /// A PDF page is turned by its /Rotate, as OCRmyPDF's `--rotate-pages` does; its content is not touched.
    static func uprightTurn(_ result: PageResult) -> Int {
        guard let orient = result.findings["orient"], orient["applied"]?.boolValue == true,
              let rotation = orient["rotation"]?.intValue, [90, 180, 270].contains(rotation) else { return 0 }
        return rotation
    }

    /// `pdf` with each of `pages` (its page index from 0, and the page read from its rendering) given a text
    /// layer, and turned upright by /Rotate when the orient stage turned it (`uprightTurn`); with `onlyPage`, that page alone (a document of one page, as the store keeps it). With
    /// `replacingEarlier`, the text layers ocrfarm added before are removed (`--pdf-text redo`).
    public static func addingText(to pdf: [UInt8], name: String, pages: [(index: Int, result: PageResult)],
                                  onlyPage: Int? = nil, replacingEarlier: Bool = false) throws(PageFailure) -> [UInt8]
    {
        let font = PDFOverlay.fontObjects(program: try PDFRendering.font())
        let layers = pages.map { page in
            let width = page.result.originalWidth ?? page.result.width
            let height = page.result.originalHeight ?? page.result.height
            return PageTextLayer(page: page.index, width: Double(width), height: Double(height),
                                 content: PDFOverlay.content(page.result, width: width, height: height),
                                 turn: uprightTurn(page.result))
        }
        do throws(QPDFError) {
            return try QPDF.addingText(to: pdf, name: name, layers: layers,
                                       objects: font.map { AddedObject(dictionary: $0.dictionary, stream: $0.stream) },
                                       fonts: [(PDFOverlay.fontName, PDFOverlay.fontObject)], replacingEarlier: replacingEarlier,
                                       onlyPage: onlyPage) { try? Zlib.compress($0) }
        } catch {
            throw PageFailure(stage: stage, code: error.kind == .password ? .pdfEncrypted : .pdfFailed,
                              message: "cannot add the text to \(name): \(error.message)")
        }
    }
}
