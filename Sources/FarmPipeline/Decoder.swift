import FarmCore
import Leptonica

/// Limits that protect a worker from hostile or absurd input.
public struct DecodeLimits: Sendable, Equatable {
    /// Largest image accepted, in pixels (default 100 megapixels).
    public var maxPixels: Int
    public init(maxPixels: Int = 100_000_000) { self.maxPixels = maxPixels }
}

/// A decoded page image and what decoding learned about it.
public struct DecodedPage {
    public let image: Pix
    public let format: ImageFormat
    /// The resolution the file declared (0 when it did not say or said something incredible).
    public let declaredResolution: Int
    /// The EXIF orientation applied to a JPEG (1: none), so `image` is the picture as people see it.
    public let exifOrientation: Int
    /// The page as decoded, before the correction stages, for the second reading of a weak page.
    public var uncorrected: UncorrectedImage?

    public init(image: Pix, format: ImageFormat, declaredResolution: Int, exifOrientation: Int = 1) {
        self.image = image
        self.format = format
        self.declaredResolution = declaredResolution
        self.exifOrientation = exifOrientation
    }

    /// What decoding found, for the page's JSON.
    public var findings: JSON {
        .object([("format", JSON(format.description)), ("width", JSON(image.width)), ("height", JSON(image.height)),
                 ("depth", JSON(image.depth)), ("resolution", JSON(declaredResolution)),
                 ("exif_orientation", JSON(exifOrientation))])
    }
}

/// The decode stage: encoded bytes in, an image Tesseract can take out (no colormap, no alpha, 1, 8 or 32 bpp).
public enum Decoder {
    public static let stage = "decode"

    public static func decode(_ bytes: [UInt8], page: Int = 0, limits: DecodeLimits = DecodeLimits())
        throws(PageFailure) -> DecodedPage
    {
        let image: Pix
        do {
            image = try Pix(encoded: bytes, page: page, maxPixels: limits.maxPixels)
        } catch {
            let code: FailureCode = error.kind == .imageTooLarge ? .imageTooLarge : .decodeFailed
            throw PageFailure(stage: stage, code: code, message: error.message)
        }
        let format = image.inputFormat
        do {
            var normalized = image
            if normalized.hasColormap { normalized = try normalized.removingColormap() }
            if normalized.depth == 32 && normalized.samplesPerPixel == 4 { normalized = try normalized.removingAlpha() }
            if normalized.depth == 16 || normalized.depth == 2 || normalized.depth == 4 { normalized = try normalized.grayscale() }
            let declared = image.resolution.y
            let credible = (70...2400).contains(declared) ? declared : 0
            let orientation = format == .jpeg ? EXIF.orientation(of: bytes) ?? 1 : 1
            normalized = try applying(orientation: orientation, to: normalized)
            if normalized !== image { normalized.setResolution(x: image.resolution.x, y: image.resolution.y) }
            return DecodedPage(image: normalized, format: format, declaredResolution: credible, exifOrientation: orientation)
        } catch {
            throw PageFailure(stage: stage, code: .decodeFailed, message: error.message)
        }
    }

    /// Turns and mirrors an image the way its EXIF orientation says it should be shown.
    static func applying(orientation: Int, to image: Pix) throws(LeptonicaError) -> Pix {
        switch orientation {
        case 2: return try image.flippedHorizontally()
        case 3: return try image.rotatedOrthogonally(quarterTurns: 2)
        case 4: return try image.flippedVertically()
        case 5: return try image.rotatedOrthogonally(quarterTurns: 1).flippedHorizontally()
        case 6: return try image.rotatedOrthogonally(quarterTurns: 1)
        case 7: return try image.rotatedOrthogonally(quarterTurns: 1).flippedVertically()
        case 8: return try image.rotatedOrthogonally(quarterTurns: 3)
        default: return image
        }
    }
}
