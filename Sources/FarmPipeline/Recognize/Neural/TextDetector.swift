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
        /// A page whose body text would be taller than this x-height in the network's input is shrunk until it is
        /// not (see `inputPlan(width:height:xHeight:)`).
        var largestXHeight = 14.0
        /// Print smaller than this x-height on the page itself is never shrunk (the reference enlarges small crops
        /// for their small print: a PubTabNet crop of 5.8 px text read CER 0.95% at the reference's size, 4.4%
        /// shrunk).
        var smallestShrunkXHeight = 10.0
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

    /// The text regions of `image`, corners in its pixels, each clipped to the image, found on the input `plan`
    /// makes (by default the reference's).
    func regions(of image: NeuralImage, plan: InputPlan? = nil) throws(ONNXRuntimeError) -> [TextRegion] {
        guard image.width > 0, image.height > 0 else { return [] }
        let plan = plan ?? inputPlan(width: image.width, height: image.height)
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

    /// `regions(of:plan:)` looked for only in the window round the page's ink (`InkWindow`), at the whole page's
    /// scale; the whole page when the window would not save much. Returns the regions and the plan that ran.
    func inkedRegions(of image: NeuralImage, plan: InputPlan) throws(ONNXRuntimeError) -> (regions: [TextRegion], plan: InputPlan) {
        guard let window = InkWindow(image, plan: plan) else { return (try regions(of: image, plan: plan), plan) }
        let windowPlan = window.plan(for: plan)
        return (try regions(of: image.cropped(to: window), plan: windowPlan).map(window.onPage), windowPlan)
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

    func inputPlan(width: Int, height: Int, xHeight: Double? = nil) -> InputPlan {
        sizing.plan(width: width, height: height, xHeight: xHeight)
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

extension TextDetector.Sizing {
    /// The reference's sizing, then, for a page whose body text (`xHeight`, in the page's pixels) is large print
    /// (`smallestShrunkXHeight` or more) and would be taller than `largestXHeight` in the input, a smaller input: the detector finds the lines of large print as
    /// well or better at that size, and its time goes with the input's pixels. (SROIE receipts, whose body text is
    /// 13–32 px in the reference's input: at 0.7 of it, the pages above 15 px read F1 +0.009 on average and those
    /// at 13 px and below −0.015.) With the body at most 14 px: SROIE F1 0.9519 → 0.9546, CER 11.23% → 11.08%, the
    /// engine's CPU −12%; on sets the limit was not chosen on, PubTabNet F1 0.9836 → 0.9838, CER 11.90% → 11.66%,
    /// DocBank pages 1–20 unchanged (their body text is 10–14 px there), tesseract-testdata F1 1.000 as before.
    func plan(width: Int, height: Int, xHeight: Double?) -> TextDetector.InputPlan {
        var plan = plan(width: width, height: height)
        let scale = Double(plan.inputWidth) / Double(width)
        guard let xHeight, xHeight >= smallestShrunkXHeight, xHeight * scale > largestXHeight else { return plan }
        let shrink = largestXHeight / (xHeight * scale)
        plan.inputWidth = TextDetector.multipleOf32(Double(plan.inputWidth) * shrink)
        plan.inputHeight = TextDetector.multipleOf32(Double(plan.inputHeight) * shrink)
        return plan
    }

    func plan(width: Int, height: Int) -> TextDetector.InputPlan {
        var w = width, h = height
        // The reference's `resize_image_within_bounds`: the long side to `maxSide`, the short side to `minSide`.
        if max(w, h) > maxSide {
            let ratio = Double(maxSide) / Double(max(w, h))
            (w, h) = (TextDetector.multipleOf32(Double(Int(Double(w) * ratio))), TextDetector.multipleOf32(Double(Int(Double(h) * ratio))))
        }
        if min(w, h) < minSide {
            let ratio = Double(minSide) / Double(min(w, h))
            (w, h) = (TextDetector.multipleOf32(Double(Int(Double(w) * ratio))), TextDetector.multipleOf32(Double(Int(Double(h) * ratio))))
        }
        // A line-shaped image is padded above and below, so the detector sees a line on a page.
        var padding = 0
        if h <= minHeight || w > widthHeightRatio * h {
            padding = abs(max(w / widthHeightRatio, minHeight) * 2 - h) / 2
        }
        let paddedHeight = h + 2 * padding
        var ratio = 1.0
        if min(w, paddedHeight) < limitSide { ratio = Double(limitSide) / Double(min(w, paddedHeight)) }
        var inputWidth = TextDetector.multipleOf32(Double(Int(Double(w) * ratio)))
        var inputHeight = TextDetector.multipleOf32(Double(Int(Double(paddedHeight) * ratio)))
        if inputWidth * inputHeight > maxPixels {
            let shrink = (Double(maxPixels) / Double(inputWidth * inputHeight)).squareRoot()
            inputWidth = max(32, Int(Double(inputWidth) * shrink) / 32 * 32)
            inputHeight = max(32, Int(Double(inputHeight) * shrink) / 32 * 32)
        }
        return TextDetector.InputPlan(resizedWidth: w, resizedHeight: h, padding: padding, inputWidth: inputWidth,
                                      inputHeight: inputHeight, scaleX: Double(width) / Double(w), scaleY: Double(height) / Double(h))
    }
}
