import FarmCore

/// The part of a page the text detector needs to see: the rectangle round its ink, with a margin. A paper page's
/// margins are blank, and the detector's time goes with its input's pixels (a synthetic clean page's text covers
/// 40–70% of it), so the detector reads the window at the scale the whole page would have had.
struct InkWindow: Sendable, Equatable {
    /// The window, in the page's pixels.
    var x: Int, y: Int, width: Int, height: Int

    /// A sample is ink when it is this many levels or more below the paper's level in any plane.
    static let contrast = 32
    /// Room left round the ink, in the detector's input pixels: more than a line's height there, so a line at the
    /// ink's edge is found in the same surroundings as on the whole page (white paper).
    static let margin = 48.0
    /// The window is used only when its input has at most this share of the whole page's input.
    static let worthwhileShare = 0.8

    init(x: Int, y: Int, width: Int, height: Int) {
        (self.x, self.y, self.width, self.height) = (x, y, width, height)
    }

    /// The window round `image`'s ink for the detector's input `plan`; nil when the whole page is to be read
    /// (no ink, ink over most of it, or a line-shaped page the plan pads).
    init?(_ image: NeuralImage, plan: TextDetector.InputPlan) {
        guard plan.padding == 0, let ink = image.inkBounds(contrast: Self.contrast) else { return nil }
        let scale = plan.inputScale
        let marginX = Int((Self.margin / scale.x).rounded(.up)), marginY = Int((Self.margin / scale.y).rounded(.up))
        x = max(0, ink.minX - marginX)
        y = max(0, ink.minY - marginY)
        width = min(image.width, ink.maxX + 1 + marginX) - x
        height = min(image.height, ink.maxY + 1 + marginY) - y
        guard Double(self.plan(for: plan).inputPixels) <= Self.worthwhileShare * Double(plan.inputPixels) else { return nil }
    }

    /// The detector's input plan for the window: the whole page's scale, no first resize, no padding. (The page's
    /// two resizes — within the reference's bounds, then to the input — at its ratios read DocBank's first 15 pages
    /// no closer to the whole page: F1 0.9543 against this plan's 0.9561, the whole page's 0.9580.)
    func plan(for page: TextDetector.InputPlan) -> TextDetector.InputPlan {
        let scale = page.inputScale
        return TextDetector.InputPlan(resizedWidth: width, resizedHeight: height, padding: 0,
                                      inputWidth: TextDetector.multipleOf32(Double(width) * scale.x),
                                      inputHeight: TextDetector.multipleOf32(Double(height) * scale.y), scaleX: 1, scaleY: 1)
    }

    /// `region` found in the window, moved onto the page.
    func onPage(_ region: TextRegion) -> TextRegion {
        TextRegion(corners: region.corners.map { Point($0.x + Double(x), $0.y + Double(y)) }, score: region.score)
    }
}

extension TextDetector.InputPlan {
    /// Input pixels per page pixel, across and down.
    var inputScale: (x: Double, y: Double) {
        (Double(inputWidth) / Double(paddedWidth) / scaleX, Double(inputHeight) / Double(paddedHeight) / scaleY)
    }

    var inputPixels: Int { inputWidth * inputHeight }
}

extension NeuralImage {
    /// The smallest rectangle holding every sample at least `contrast` levels below the paper's level in its plane
    /// (the 90th percentile of the plane, sampled), looked for on every second row; nil when there is none.
    func inkBounds(contrast: Int) -> (minX: Int, minY: Int, maxX: Int, maxY: Int)? {
        var minX = Int.max, minY = Int.max, maxX = -1, maxY = -1
        for plane in planes {
            let threshold = Self.paperLevel(plane) - contrast
            guard threshold > 0 else { continue }
            plane.withUnsafeBufferPointer { samples in
                for row in stride(from: 0, to: height, by: 2) {
                    let start = row * width
                    guard let first = (0..<width).first(where: { Int(samples[start + $0]) < threshold }) else { continue }
                    let last = (first..<width).last(where: { Int(samples[start + $0]) < threshold }) ?? first
                    minX = min(minX, first); maxX = max(maxX, last)
                    minY = min(minY, row); maxY = max(maxY, min(height - 1, row + 1))
                }
            }
        }
        return maxX < 0 ? nil : (minX, minY, maxX, maxY)
    }

    /// The level 90% of `plane`'s samples (every 16th) are at or below: the paper's.
    static func paperLevel(_ plane: [UInt8]) -> Int {
        var levels = LevelHistogram()
        for index in stride(from: 0, to: plane.count, by: 16) { levels.add(plane[index]) }
        return levels.percentile(0.9)
    }

    /// The samples inside `window`.
    func cropped(to window: InkWindow) -> NeuralImage {
        NeuralImage(width: window.width, height: window.height, planes: planes.map { plane in
            var out = [UInt8]()
            out.reserveCapacity(window.width * window.height)
            for row in window.y..<(window.y + window.height) {
                let start = row * width + window.x
                out.append(contentsOf: plane[start..<(start + window.width)])
            }
            return out
        })
    }
}
