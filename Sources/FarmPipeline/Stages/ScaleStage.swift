import FarmCore
import Leptonica

/// scale: resizes the page so its body text has the x-height Tesseract reads best, measured from the page
/// itself (the most common glyph height), so small print is enlarged and large print reduced alike; and never so
/// far down that the page's smallest text (table cells, footnotes: the smallest glyph height many glyphs share)
/// falls below the x-height Tesseract still reads reliably.
public struct ScaleStage: PageStage {
    public let name = CorrectionStage.scale.rawValue
    /// The x-height, in pixels, that reads best (measured: see docs/architecture.md).
    static let targetXHeight = 16.0
    /// For Chinese and Japanese the common glyph is a full-height ideograph, not a lowercase letter.
    static let targetIdeographHeight = 21.0
    /// The smallest x-height Tesseract reads reliably: a page is never reduced so far that its smallest text
    /// (see `TextSize.Estimate.smallXHeight`) falls below it.
    static let minimumXHeight = 12.0
    /// Changes smaller than this fraction are not worth the resampling.
    static let tolerance = 0.1
    /// How far a page is enlarged at most. Table crops of cell text 5 px high read better at 3× (pubtabnet-sample
    /// F1 0.600 against 0.574), but receipts whose x-height is measured as small read worse (one SROIE receipt fell
    /// from 0.84 to 0.70), so the limit stays where it was.
    static let maximumFactor = 2.5

    /// The factor for body text of x-height `estimate.xHeight` whose smallest text is `estimate.smallXHeight`: the
    /// body brought to `target`, but a reduction only as far as the smallest text stays readable (small text never
    /// makes a page larger: a page's dots and commas can pass for it).
    /// The floor is for alphabets only: an ideograph breaks into several connected pieces (radicals, strokes), whose
    /// small heights are parts of the body text, not small text (with the floor, the sample Chinese page was read at
    /// 25 px ideographs instead of 21 and 己 became 已).
    static func factor(for estimate: TextSize.Estimate, target: Double, unspaced: Bool = false) -> Double {
        let body = min(maximumFactor, target / estimate.xHeight)
        guard body < 1, !unspaced else { return max(0.3, body) }
        let floor = min(1, minimumXHeight / estimate.smallXHeight)
        return max(0.3, body, floor)
    }

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        do throws(LeptonicaError) {
            guard let estimate = try TextSize.estimate(image) else {
                context.record(name, .object([("applied", false), ("reason", "too little text to measure")]))
                return image
            }
            context.unscaledTextSize = estimate
            let unspaced = LanguagePlan(context.languages).isUnspaced
            let target = unspaced ? Self.targetIdeographHeight : Self.targetXHeight
            let wanted = Self.factor(for: estimate, target: target, unspaced: unspaced)
            // A huge page of small print is enlarged only as far as the page's memory budget allows.
            let factor = min(wanted, context.largestEnlargement(of: image) ?? wanted)
            let apply = abs(factor - 1) > Self.tolerance
            var findings: [(String, JSON)] = [("x_height", .rounded(estimate.xHeight, places: 1)),
                                              ("small_x_height", .rounded(estimate.smallXHeight, places: 1)),
                                              ("factor", .rounded(factor, places: 3)), ("applied", JSON(apply))]
            if factor < wanted { findings.append(("limited_by_memory_from", .rounded(wanted, places: 3))) }
            context.record(name, .object(findings))
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
