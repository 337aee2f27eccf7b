import FarmCore
import Leptonica

/// enhance: flattens lighting and shadows, whitens the background and restores contrast. The OCR reads the
/// flattened gray page; the image kept for the PDF is in the chosen mode (color, gray, or black and white).
public struct EnhanceStage: PageStage {
    public let name = "enhance"
    let mode: PipelineOptions.EnhanceMode

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        do throws(LeptonicaError) {
            let gray = try image.minimumChannel()
            let flattened = try gray.backgroundNormalized(tile: 64, threshold: 100, minimumCount: 50, background: 230)
            switch mode {
            case .gray: context.keptImage = flattened
            case .bw: context.keptImage = try flattened.sauvolaBinarized()
            case .color: context.keptImage = image
            }
            context.record(name, .object([("mode", JSON(mode.rawValue))]))
            return flattened
        } catch {
            throw error.failure(name)
        }
    }
}
