import FarmCore
import Leptonica

/// enhance: flattens lighting and shadows, whitens the background and restores contrast. The OCR reads the
/// flattened gray page; the image kept for the PDF is in the chosen mode (color, gray, or black and white).
///
/// The paper's brightness at each point is estimated on a quarter-size copy (a gray closing wide enough to erase
/// text, then a box blur), and the page is divided by it: paper becomes white under any light or shadow. Then
/// the levels are stretched (the darkest half percent to black, the 90th percentile, paper, to white), and a thin
/// frame is whitened, because a page edge mixed with background is not content.
public struct EnhanceStage: PageStage {
    public let name = "enhance"
    let mode: PipelineOptions.EnhanceMode

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        do throws(LeptonicaError) {
            let gray = image.depth == 32 ? try image.luminance() : try image.grayscale()
            let flattened = try Self.flatten(gray)
            switch mode {
            case .gray: context.keptImage = nil   // what is read is what is kept
            case .bw: context.keptImage = try flattened.sauvolaBinarized()
            case .color: context.keptImage = image
            }
            context.record(name, .object([("mode", JSON(mode.rawValue))]))
            return flattened
        } catch {
            throw error.failure(name)
        }
    }

    /// Divides by the estimated paper brightness, stretches the levels and whitens the border.
    static func flatten(_ gray: Pix) throws(LeptonicaError) -> Pix {
        let width = gray.width, height = gray.height
        let scale = Double(width) / 2480
        let quarter = try gray.resampled(by: 0.25)
        let window = max(3, Int((31 * scale).rounded()) | 1)
        let background = try quarter.closedGray(width: window, height: window)
            .blurred(halfWidth: window / 2, halfHeight: window / 2)
            .scaled(toWidth: width, height: height)
            .grayPixels()
        var pixels = try gray.grayPixels()
        pixels.data.withUnsafeMutableBufferPointer { page in
            background.data.withUnsafeBufferPointer { paper in
                for i in 0..<page.count {
                    let value = 255 * Int(page[i]) / max(Int(paper[i]), 1)
                    page[i] = UInt8(min(value, 255))
                }
            }
        }
        // Levels: sampled on every fourth pixel of every fourth row.
        var histogram = [Int](repeating: 0, count: 256)
        var samples = 0
        for y in stride(from: 0, to: height, by: 4) {
            for x in stride(from: 0, to: width, by: 4) { histogram[Int(pixels.data[y * width + x])] += 1; samples += 1 }
        }
        func percentile(_ fraction: Double) -> Int {
            var seen = 0
            for value in 0..<256 {
                seen += histogram[value]
                if Double(seen) >= fraction * Double(samples) { return value }
            }
            return 255
        }
        let black = percentile(0.005), white = max(percentile(0.90), black + 1)
        let table: [UInt8] = (0..<256).map { value in
            UInt8(min(255, max(0, (value - black) * 255 / (white - black))))
        }
        let border = Int((0.005 * Double(width)).rounded())
        for y in 0..<height {
            let edgeRow = y < border || y >= height - border
            for x in 0..<width {
                let i = y * width + x
                pixels.data[i] = edgeRow || x < border || x >= width - border ? 255 : table[Int(pixels.data[i])]
            }
        }
        let result = try Pix(gray: pixels)
        result.setResolution(x: gray.resolution.x, y: gray.resolution.y)
        return result
    }
}
