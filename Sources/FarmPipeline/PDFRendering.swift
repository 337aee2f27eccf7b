import FarmCore
import FarmRender
import Leptonica
import Synchronization
import Tesseract

/// Renders a recognized page as a one-page searchable PDF (our own text layer; see `SearchablePDF`). The page
/// image is compressed here, where the Leptonica image is, and the glyphless font comes from Tesseract's data:
/// `SearchablePDF` (FarmRender) writes the document from them without either library.
enum PDFRendering {
    static let stage = "render"

    /// Tesseract's glyphless font, read once from the installed language data.
    private static let cachedFont = Mutex<[UInt8]?>(nil)

    static func font() throws(PageFailure) -> [UInt8] {
        if let font = cachedFont.withLock({ $0 }) { return font }
        let path = TesseractEngine.defaultDataPath + "/pdf.ttf"
        guard let bytes = try? FileSystem.read(path), !bytes.isEmpty else {
            throw PageFailure(stage: stage, code: .ocrFailed,
                              message: "cannot read \(path), the glyphless font for PDF text (Debian: libtesseract5)")
        }
        cachedFont.withLock { $0 = bytes }
        return bytes
    }

    /// `image` is the picture to show (the kept page image, the same size as the recognized one).
    /// For PDF/A-2B (`type`), the system's sRGB profile is its output intent: without one the page fails (saying
    /// which package has it) rather than come out as a plain PDF that claims nothing.
    static func page(_ result: PageResult, image: Pix, resolution: Int, title: String, type: PDFType = .pdfa2b)
        throws(PageFailure) -> [UInt8]
    {
        var archive: PDFAProfile?
        if type == .pdfa2b {
            switch PDFAProfile.current() {
            case .success(let profile): archive = profile
            case .failure(let error): throw PageFailure(stage: stage, code: .internalError, message: error.message)
            }
        }
        let compressed: CompressedImage
        do throws(LeptonicaError) {
            compressed = try image.compressedForPDF()
        } catch {
            throw PageFailure(stage: stage, code: .internalError, message: error.description)
        }
        let colorSpace: String
        if let palette = compressed.palette {
            colorSpace = "[/Indexed /DeviceRGB \(palette.count - 1) \(palette.hex)]"
        } else {
            colorSpace = compressed.components == 3 ? "/DeviceRGB" : "/DeviceGray"
        }
        let filter: PDFImage.Filter = switch compressed.encoding {
        case .jpeg: .dct
        case .group4: .ccittFax
        case .flate: .flate
        }
        let pdfImage = PDFImage(data: compressed.bytes, filter: filter, width: compressed.width, height: compressed.height,
                                bitsPerComponent: compressed.bitsPerComponent, colorSpace: colorSpace,
                                components: compressed.components, predictor: compressed.predictor)
        return SearchablePDF.document(result, image: pdfImage, resolution: resolution, font: try font(), title: title,
                                     archive: archive) {
            try? Zlib.compress($0)
        }
    }
}
