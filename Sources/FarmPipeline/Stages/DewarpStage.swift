import FarmCore
import Leptonica

/// dewarp: straightens the text lines of a page that does not lie flat (a book photographed open), with
/// Leptonica's page model built from the long text lines of a binarized copy.
///
/// A flat page is never bent: the model is applied only when a row of its vertical disparity, less the row's
/// straight-line fit (tilt is not a bend), spreads over a large part of the distance between lines (`minimumBend`). Too few long lines, and the model is not built: the
/// page goes on as it was, with the reason in the findings. The map to the original image (`toPage`) is a
/// homography and a dewarp is not one, so on a dewarped page word boxes map back only approximately
/// (`"mapping": "approximate"` in the findings).
public struct DewarpStage: PageStage {
    public let name = CorrectionStage.dewarp.rawValue

    /// How far a row of the page must bend, as a fraction of the line pitch, for the page to count as curved.
    ///
    /// Measured (bend ÷ pitch) on the 55 flat pages where a model could be built, out of 171 (docbank-sample,
    /// tesseract-testdata, smartdoc15-sample, phone-scan-ru-sample, midv500-sample, DIBCO, ocrmypdf-test-resources,
    /// synthetic clean, scan and photo): at most 0.30 and 0.21 (two-column docbank pages, whose half-width lines are
    /// extrapolated across the page), 0.17 for the rest. Curved pages: 0.75 (Leptonica's sample book page 1555_007), 1.25 and 2.83 (the
    /// page_dewarp book photos). The threshold sits between the two groups, a factor of 1.5 from each.
    static let minimumBend = 0.45

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
            // Leptonica's line finding is tuned for text around 300 ppi: a large photo is modelled at half size (a
            // quarter of the cost; the disparity is scaled back up when applied).
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
            // Leptonica applies the model through full-size float disparity arrays: about 32 bytes per pixel at its
            // peak (an 81 MP page rose from 484 MB to 3.05 GB), so a huge page is left as it is.
            guard context.fits(image, bytesPerPixel: Self.bytesPerPixelApplied) else {
                findings.append(("reason", "over the page memory budget"))
                finish(false)
                return image
            }
            let dewarped: Pix
            do throws(LeptonicaError) {
                dewarped = try model.applied(to: image)
            } catch {
                // Leptonica can still refuse the model (it checks its own limits again when applying it): the page
                // goes on as it was, with Leptonica's reason.
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

    /// Peak memory of applying a model, per page pixel (measured on an 81 MP page).
    static let bytesPerPixelApplied = 32

    /// Text black on white at 1 bpp, under uneven light: the background is flattened before the threshold.
    static func binarized(_ image: Pix) throws(LeptonicaError) -> Pix {
        if image.depth == 1 { return image }
        return try image.backgroundNormalized().binarized(threshold: 130)
    }
}
