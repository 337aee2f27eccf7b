import FarmCore
import ONNXRuntime

/// PP-OCRv6's DB text detector: a page in, the quadrilaterals of its text lines out, in the page's pixels.
/// Owns one inference session; used on its page slot's thread only.
final class TextDetector {
    /// How the page is sized for the network (the reference pipeline's `max_side_len`, `min_side_len`,
    /// `limit_side_len` with `limit_type: min`, and its vertical padding of line-shaped images), with a cap on
    /// the input's pixels so memory stays bounded on any page.
    struct Sizing: Sendable {
        /// Pages with a longer side are first shrunk to it.
        var maxSide = 2000
        /// Pages with a shorter side are first enlarged to it.
        var minSide = 30
        /// The network's input has at least this short side (small text needs the enlargement).
        var limitSide = 736
        /// Images wider than this many heights (a single line) are padded above and below.
        var widthHeightRatio = 8
        /// The padded height's floor.
        var minHeight = 30
        /// The network's input never has more pixels than this (about 0.4 GB of activations at the cap).
        var maxPixels = 2048 * 2048
    }

    let session: InferenceSession
    var sizing = Sizing()
    var settings = ProbabilityMap.Settings()

    init(session: InferenceSession) {
        self.session = session
    }

    /// A multiple of 32 near `value` (Python's `round`, halves to even), at least 32.
    static func multipleOf32(_ value: Double) -> Int {
        max(32, Int((value / 32).rounded(.toNearestOrEven)) * 32)
    }

    /// The text regions of `image`, corners in its pixels, each clipped to the image.
    func regions(of image: NeuralImage) throws(ONNXRuntimeError) -> [TextRegion] {
        guard image.width > 0, image.height > 0 else { return [] }
        let plan = inputPlan(width: image.width, height: image.height)
        let map = try probabilityMap(image, plan)
        return map.regions(settings).compactMap { region in
            let corners = region.corners.map { point in
                // Map pixels → the padded, resized page (rounded as the reference does) → the page.
                let x = (point.x / Double(map.width) * Double(plan.paddedWidth)).rounded()
                let y = (point.y / Double(map.height) * Double(plan.paddedHeight)).rounded()
                return Point(min(max(x * plan.scaleX, 0), Double(image.width - 1)),
                             min(max((y - Double(plan.padding)) * plan.scaleY, 0), Double(image.height - 1)))
            }
            let ordered = RotatedRect(corners: corners).orderedCorners
            // Lines thinner or shorter than four pixels are specks (the reference's `filter_det_res`).
            guard ordered[0].distance(to: ordered[1]) > 3, ordered[0].distance(to: ordered[3]) > 3 else { return nil }
            return TextRegion(corners: ordered, score: region.score)
        }
    }

    /// How a `width` × `height` page becomes the network's input: the page resized to `resizedWidth` ×
    /// `resizedHeight`, then `padding` rows of black added above and below, then that resized to `inputWidth` ×
    /// `inputHeight`. `scaleX`, `scaleY` take the resized page's pixels back to the page's.
    struct InputPlan: Sendable, Equatable {
        var resizedWidth: Int, resizedHeight: Int
        var padding: Int
        var inputWidth: Int, inputHeight: Int
        var scaleX: Double, scaleY: Double
        var paddedWidth: Int { resizedWidth }
        var paddedHeight: Int { resizedHeight + 2 * padding }
    }

    func inputPlan(width: Int, height: Int) -> InputPlan {
        var w = width, h = height
        // The reference's `resize_image_within_bounds`: the long side to `maxSide`, the short side to `minSide`.
        if max(w, h) > sizing.maxSide {
            let ratio = Double(sizing.maxSide) / Double(max(w, h))
            (w, h) = (Self.multipleOf32(Double(Int(Double(w) * ratio))), Self.multipleOf32(Double(Int(Double(h) * ratio))))
        }
        if min(w, h) < sizing.minSide {
            let ratio = Double(sizing.minSide) / Double(min(w, h))
            (w, h) = (Self.multipleOf32(Double(Int(Double(w) * ratio))), Self.multipleOf32(Double(Int(Double(h) * ratio))))
        }
        // A line-shaped image is padded above and below, so the detector sees a line on a page.
        var padding = 0
        if h <= sizing.minHeight || w > sizing.widthHeightRatio * h {
            padding = abs(max(w / sizing.widthHeightRatio, sizing.minHeight) * 2 - h) / 2
        }
        let paddedHeight = h + 2 * padding
        var ratio = 1.0
        if min(w, paddedHeight) < sizing.limitSide { ratio = Double(sizing.limitSide) / Double(min(w, paddedHeight)) }
        var inputWidth = Self.multipleOf32(Double(Int(Double(w) * ratio)))
        var inputHeight = Self.multipleOf32(Double(Int(Double(paddedHeight) * ratio)))
        if inputWidth * inputHeight > sizing.maxPixels {
            let shrink = (Double(sizing.maxPixels) / Double(inputWidth * inputHeight)).squareRoot()
            inputWidth = max(32, Int(Double(inputWidth) * shrink) / 32 * 32)
            inputHeight = max(32, Int(Double(inputHeight) * shrink) / 32 * 32)
        }
        return InputPlan(resizedWidth: w, resizedHeight: h, padding: padding, inputWidth: inputWidth, inputHeight: inputHeight,
                         scaleX: Double(width) / Double(w), scaleY: Double(height) / Double(h))
    }

    /// The network's probability map of the page prepared by `plan`.
    func probabilityMap(_ image: NeuralImage, _ plan: InputPlan) throws(ONNXRuntimeError) -> ProbabilityMap {
        var page = image
        if plan.resizedWidth != image.width || plan.resizedHeight != image.height {
            page = page.resized(width: plan.resizedWidth, height: plan.resizedHeight)
        }
        if plan.padding > 0 {
            let rows = [UInt8](repeating: 0, count: plan.padding * page.width)
            page = NeuralImage(width: page.width, height: page.height + 2 * plan.padding,
                               planes: page.planes.map { rows + $0 + rows })
        }
        var values = [Float](repeating: 0, count: 3 * plan.inputWidth * plan.inputHeight)
        page.writeNormalized(into: &values, offset: 0, height: plan.inputHeight, resizedWidth: plan.inputWidth,
                             paddedWidth: plan.inputWidth)
        let output = try session.run(Tensor(shape: [1, 3, plan.inputHeight, plan.inputWidth], values: values))
        guard output.shape.count == 4, output.shape[2] > 0, output.shape[3] > 0,
              output.values.count >= output.shape[2] * output.shape[3] else {
            throw ONNXRuntimeError(.runtime, "\(session.modelPath): unexpected detector output shape \(output.shape)")
        }
        let mapHeight = output.shape[2], mapWidth = output.shape[3]
        return ProbabilityMap(width: mapWidth, height: mapHeight, values: Array(output.values.prefix(mapWidth * mapHeight)))
    }
}
