import FarmCore
import Leptonica

/// scale: resizes the page so its body text has the x-height Tesseract reads best, measured from the page
/// itself (the most common glyph height), so small print is enlarged and large print reduced alike.
public struct ScaleStage: PageStage {
    public let name = "scale"
    /// The x-height, in pixels, that reads best (measured: see docs/architecture.md).
    static let targetXHeight = 16.0
    /// For Chinese and Japanese the common glyph is a full-height ideograph, not a lowercase letter.
    static let targetIdeographHeight = 21.0
    /// Changes smaller than this fraction are not worth the resampling.
    static let tolerance = 0.1

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        do throws(LeptonicaError) {
            guard let estimate = try TextSize.estimate(image) else {
                context.record(name, .object([("applied", false), ("reason", "too little text to measure")]))
                return image
            }
            let unspaced = LanguagePlan(context.languages).isUnspaced
            let target = unspaced ? Self.targetIdeographHeight : Self.targetXHeight
            let factor = min(2.5, max(0.3, target / estimate.xHeight))
            let apply = abs(factor - 1) > Self.tolerance
            context.record(name, .object([("x_height", .rounded(estimate.xHeight, places: 1)), ("factor", .rounded(factor, places: 3)),
                                          ("applied", JSON(apply))]))
            guard apply else { return image }
            let scaled = try image.resampled(by: factor)
            context.toPage = context.toPage.then(.scale(Double(scaled.width) / Double(image.width),
                                                        Double(scaled.height) / Double(image.height)))
            if context.resolution > 0 { context.resolution = Int((Double(context.resolution) * factor).rounded()) }
            scaled.setResolution(x: context.resolution, y: context.resolution)
            return scaled
        } catch {
            throw error.failure(name)
        }
    }
}
