import FarmCore
import Leptonica

/// dewarp: straightens the text lines of a page that does not lie flat (a book photographed open), with
/// Leptonica's page model built from the long text lines of a binarized copy.
///
/// A flat page is never bent: the model is applied only when its most curved line bends, over the page's width, by
/// a large part of the distance between lines (`minimumBend`). Too few long lines, and the model is not built: the
/// page goes on as it was, with the reason in the findings. The map to the original image (`toPage`) is a
/// homography and a dewarp is not one, so on a dewarped page word boxes map back only approximately
/// (`"mapping": "approximate"` in the findings).
public struct DewarpStage: PageStage {
    public let name = "dewarp"

    /// The bend of the most curved line, as a fraction of the line pitch, from which a page counts as curved.
    ///
    /// Measured (lineBend ÷ linePitch): flat scans and flattened photos, at most 0.1X; the four curved book
    /// photos, 0.X and more. A line that bends by a third of the pitch already crosses into the next line's
    /// band at the page's edges, which is where Tesseract's line finding breaks.
    static let minimumBend = 0.35

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        let start = Clock.monotonicNanoseconds
        do throws(LeptonicaError) {
            var findings: [(String, JSON)] = []
            func finish(_ applied: Bool) {
                findings.insert(("applied", JSON(applied)), at: 0)
                if applied { findings.append(("mapping", "approximate")) }
                findings.append(("ms", .rounded(Clock.milliseconds(since: start), places: 1)))
                context.record(name, .object(findings))
            }
            // Leptonica's line finding is tuned for text around 300 ppi: a large photo is modelled at half size.
            let reduction = max(image.width, image.height) > 3000 ? 2 : 1
            let binary = try Self.binarized(image)
            let model: DewarpModel
            switch try binary.dewarpModel(reduction: reduction) {
            case .failure(let reason):
                findings.append(("reason", JSON(reason.message)))
                finish(false)
                return image
            case .success(let built):
                model = built
            }
            let bend = model.linePitch > 0 ? model.bend / model.linePitch : 0
            findings += [("lines", JSON(model.lines)),
                         ("curvature", .array([JSON(model.minimumCurvature), JSON(model.maximumCurvature)])),
                         ("edge_curvature", .array([JSON(model.leftEdgeCurvature), JSON(model.rightEdgeCurvature)])),
                         ("line_bend", .rounded(model.lineBend, places: 1)),
                         ("line_pitch", .rounded(model.linePitch, places: 1)),
                         ("row_bend", .rounded(model.bend, places: 1)),
                         ("bend", .rounded(bend, places: 3)),
                         ("disparity_range", .rounded(model.verticalDisparityRange, places: 1)),
                         ("horizontal", JSON(model.hasHorizontalDisparity))]
            guard bend >= Self.minimumBend else {
                findings.append(("reason", "flat"))
                finish(false)
                return image
            }
            let dewarped: Pix
            do throws(LeptonicaError) {
                dewarped = try model.applied(to: image)
            } catch {
                // Leptonica refuses a model outside its limits of curvature: the page goes on as it was.
                findings.append(("reason", JSON(error.message)))
                finish(false)
                return image
            }
            dewarped.setResolution(x: image.resolution.x, y: image.resolution.y)
            // The kept picture must show the same page the words are read from.
            if let kept = context.keptImage, kept.width == image.width, kept.height == image.height {
                context.keptImage = try model.applied(to: kept)
            }
            finish(true)
            return dewarped
        } catch {
            throw error.failure(name)
        }
    }

    /// Text black on white at 1 bpp, under uneven light: the background is flattened before the threshold.
    static func binarized(_ image: Pix) throws(LeptonicaError) -> Pix {
        if image.depth == 1 { return image }
        return try image.backgroundNormalized().binarized(threshold: 130)
    }
}
