import FarmCore
import Leptonica
import Tesseract

/// orient: turns the page by 0, 90, 180 or 270 degrees so its text is upright, from Tesseract's orientation and
/// script detection, when OSD is confident enough.
public struct OrientStage: PageStage {
    public let name = "orient"
    /// OSD confidence needed to act (OCRmyPDF uses 14 and leaves some pages upside down; see docs).
    public static let defaultThreshold = 2.0
    let detector: OrientationDetector
    let threshold: Double

    init(detector: OrientationDetector, threshold: Double) {
        self.detector = detector
        self.threshold = threshold
    }

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        do throws(LeptonicaError) {
            // OSD reads a binary image; a page ~1500 px tall is plenty and much faster than a full scan.
            let factor = min(1, 1500 / Double(max(image.height, image.width)))
            let sample = factor < 1 ? try image.grayscale().scaled(by: factor) : image
            let result: OrientationResult
            do throws(TesseractError) {
                result = try detector.detect(sample, resolution: context.resolution > 0 ? Int(Double(context.resolution) * factor) : nil)
            } catch {
                context.record(name, .object([("rotation", 0), ("applied", false), ("reason", JSON(error.message))]))
                return image
            }
            let apply = result.rotation != 0 && result.confidence >= threshold
            context.record(name, .object([
                ("rotation", JSON(result.rotation)), ("confidence", .rounded(result.confidence)),
                ("script", JSON(result.script)), ("script_confidence", .rounded(result.scriptConfidence)),
                ("applied", JSON(apply)),
            ]))
            guard apply else { return image }
            let turns = result.rotation / 90
            context.toPage = context.toPage.then(Self.quarterTurns(turns, width: image.width, height: image.height))
            return try image.rotatedOrthogonally(quarterTurns: turns)
        } catch {
            throw error.failure(name)
        }
    }

    /// The map of pixel coordinates for an image of `width` × `height` turned clockwise by `turns` × 90°.
    static func quarterTurns(_ turns: Int, width: Int, height: Int) -> Homography {
        let w = Double(width), h = Double(height)
        switch ((turns % 4) + 4) % 4 {
        case 1: return Homography([0, -1, h, 1, 0, 0, 0, 0, 1])    // (x, y) → (h − y, x)
        case 2: return Homography([-1, 0, w, 0, -1, h, 0, 0, 1])   // (x, y) → (w − x, h − y)
        case 3: return Homography([0, 1, 0, -1, 0, w, 0, 0, 1])    // (x, y) → (y, w − x)
        default: return .identity
        }
    }
}
