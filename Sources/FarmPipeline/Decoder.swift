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
            let code: FailureCode = error.message.hasPrefix(ImageTooLarge.marker) ? .imageTooLarge : .decodeFailed
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
            if normalized !== image { normalized.setResolution(x: image.resolution.x, y: image.resolution.y) }
            return DecodedPage(image: normalized, format: format, declaredResolution: credible)
        } catch {
            throw PageFailure(stage: stage, code: .decodeFailed, message: error.message)
        }
    }
}
