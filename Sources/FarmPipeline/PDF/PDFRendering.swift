import FarmCore
import FarmRender
import FarmRuntime
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

    /// The picture a PDF page shows, where it goes, and how the file's image survived (for the findings).
    struct Picture {
        let image: PDFImage
        let placement: PDFPlacement
        /// `original` or `corrected` (or `processed`: the processed page image, for a page that came from a PDF).
        let choice: String
        /// `copied` (the file's bytes), `lossless` (its pixels exactly), `converted: why`, or `re-encoded`.
        let kept: String
    }

    /// The page with its text over `picture`. For PDF/A-2B (`type`), the system's sRGB profile is its output intent:
    /// without one the page fails (saying which package has it) rather than come out as a plain PDF that claims nothing.
    static func page(_ result: PageResult, picture: Picture, title: String, type: PDFType = .pdfa2b) throws(PageFailure) -> [UInt8] {
        var archive: PDFAProfile?
        if type == .pdfa2b {
            switch PDFAProfile.current() {
            case .success(let profile): archive = profile
            case .failure(let error): throw PageFailure(stage: stage, code: .internalError, message: error.message)
            }
        }
        return SearchablePDF.document(result, image: picture.image, placement: picture.placement, font: try font(), title: title,
                                      archive: archive) {
            try? Zlib.compress($0)
        }
    }

    /// The file's own image (page `index` of `bytes`), kept without loss and turned by quarter turns to show upright,
    /// the recognized page's words mapped onto it through `toOriginal`.
    /// - Parameters:
    ///   - original: the decoded original's size (after its EXIF orientation), the image `toOriginal` maps to.
    ///   - resolution: pixels per inch of the recognized page; `originalResolution` the file's, when it says one.
    static func original(_ bytes: [UInt8], index: Int, exifOrientation: Int, original: (width: Int, height: Int),
                         toOriginal: Homography, recognized: (width: Int, height: Int), resolution: Double,
                         originalResolution: Double? = nil, maxPixels: Int) throws(LeptonicaError) -> Picture
    {
        let kept = try Pix.pdfImage(of: bytes, page: index, maxPixels: maxPixels)
        // A JPEG's bytes are as stored, before its EXIF orientation; decoded pixels are as shown.
        let stored = kept.encoding == .jpeg && [5, 6, 7, 8].contains(exifOrientation)
            ? (width: original.height, height: original.width) : original
        let imageToReference = kept.encoding == .jpeg
            ? PDFPlacement.exifMap(exifOrientation, width: stored.width, height: stored.height) : .identity
        guard kept.width == stored.width, kept.height == stored.height else {
            throw LeptonicaError("pdf image", message: "the file's image is \(kept.width)x\(kept.height), decoded \(original.width)x\(original.height)")
        }
        let placement = PDFPlacement(imageWidth: kept.width, imageHeight: kept.height, imageToReference: imageToReference,
                                     referenceWidth: original.width, referenceHeight: original.height,
                                     recognizedToReference: toOriginal, recognizedWidth: recognized.width,
                                     recognizedHeight: recognized.height,
                                     resolution: originalResolution
                                         ?? resolution * scale(of: toOriginal, width: recognized.width, height: recognized.height))
        let keptName: String = switch kept.kept {
        case .copied: "copied"
        case .lossless: "lossless"
        case .converted(let why): "converted: " + why
        }
        return Picture(image: pdfImage(kept), placement: placement, choice: PDFImageChoice.original.rawValue, kept: keptName)
    }

    /// The corrected page: the decoded original (`page`, EXIF orientation applied) warped through `toOriginal` onto the
    /// upright recognized page at the original's resolution (as many pixels as the page had there), in `mode`'s look,
    /// compressed as the processed page is (JPEG for gray and color, Group 4 for black and white).
    static func corrected(_ page: Pix, mode: ImageMode, toOriginal: Homography, recognized: (width: Int, height: Int),
                          resolution: Double, originalResolution: Double? = nil) throws(LeptonicaError) -> Picture
    {
        var image = page
        if mode != .color && image.depth == 32 { image = try image.luminance() }
        let factor = scale(of: toOriginal, width: recognized.width, height: recognized.height)
        if toOriginal != .identity {
            let (w, h) = (Double(recognized.width), Double(recognized.height))
            let corners = [Point(0, 0), Point(w, 0), Point(w, h), Point(0, h)].map(toOriginal.apply)
            image = try image.rectified(corners: corners.map { PixelPoint(x: $0.x, y: $0.y) },
                                        width: max(1, Int((w * factor).rounded())), height: max(1, Int((h * factor).rounded())))
        }
        if mode == .bw && image.depth == 8 { image = try image.sauvolaBinarized() }
        let compressed = try image.compressedForPDF()
        let placement = PDFPlacement(imageWidth: image.width, imageHeight: image.height, recognizedWidth: recognized.width,
                                     recognizedHeight: recognized.height, resolution: originalResolution ?? resolution * factor)
        return Picture(image: pdfImage(compressed), placement: placement, choice: PDFImageChoice.corrected.rawValue,
                       kept: "re-encoded")
    }

    /// `image` (the processed page image, maybe another size than the recognized one) shown as it is.
    static func processed(_ image: Pix, recognized: (width: Int, height: Int), resolution: Double) throws(LeptonicaError) -> Picture {
        let compressed = try image.compressedForPDF()
        let placement = PDFPlacement(imageWidth: compressed.width, imageHeight: compressed.height, recognizedWidth: recognized.width,
                                     recognizedHeight: recognized.height,
                                     resolution: resolution * Double(compressed.width) / Double(max(recognized.width, 1)))
        return Picture(image: pdfImage(compressed), placement: placement, choice: "processed", kept: "re-encoded")
    }

    /// Original pixels per recognized pixel: the square root of the recognized page's area in the original over its
    /// area in pixels.
    static func scale(of toOriginal: Homography, width: Int, height: Int) -> Double {
        let (w, h) = (Double(max(width, 1)), Double(max(height, 1)))
        let corners = [Point(0, 0), Point(w, 0), Point(w, h), Point(0, h)].map(toOriginal.apply)
        var area = 0.0
        for i in 0..<4 {
            area += corners[i].x * corners[(i + 1) % 4].y - corners[(i + 1) % 4].x * corners[i].y
        }
        let factor = (abs(area) / 2 / (w * h)).squareRoot()
        return factor.isFinite && factor > 0 ? factor : 1
    }

    private static func pdfImage(_ kept: PDFPageImage) -> PDFImage {
        let filter: PDFImage.Filter = switch kept.encoding {
        case .jpeg: .dct
        case .jpeg2000: .jpx
        case .group4: .ccittFax
        case .flate: .flate
        }
        return PDFImage(data: kept.bytes, filter: filter, width: kept.width, height: kept.height,
                        bitsPerComponent: kept.bitsPerComponent, components: kept.components, palette: kept.palette,
                        predictor: kept.predictor)
    }
}
