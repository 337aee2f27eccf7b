import FarmCore
import FarmRuntime
import ONNXRuntime

/// The learned document mask of issue 39 (decision 0093): the project's own small U-Net
/// (`Training/mask/model/document-mask.onnx`, trained by `Training/mask/train.py`) run on the whole photo squashed to
/// 128 × 128; for each cell, the probability that it lies on the document. The segment stage weighs it in on colour
/// photos unless `OCRFARM_DOCUMENT_MASK` is "off" (`LazyDocumentMask`, DocumentMask+Choice.swift; decision 0102).
///
/// Owns one inference session (one ONNX Runtime thread); made and used on one page slot's thread.
final class DocumentMask {
    /// The environment variable that chooses the mask: unset, empty or "on" for the installed model
    /// (`Scripts/install-neural`), a model file's path for another; "off", detection is the detector's alone.
    static let environmentKey = "OCRFARM_DOCUMENT_MASK"
    /// The committed network's input side, in cells.
    static let inputSize = 128

    /// The mask: `size` × `size` probabilities, rows top down, over the whole photo (squashed, as the input was).
    struct Grid: Sendable, Equatable {
        let size: Int
        let values: [Float]

        /// The probability at cell `(x, y)`.
        func value(_ x: Int, _ y: Int) -> Float { values[y * size + x] }
    }

    let session: InferenceSession
    /// This model's input side, in cells (`train.py --size`; its `--tiny` configuration trains at 32).
    let size: Int

    /// Loads the model at `modelPath` into ONNX Runtime, one thread; its input is `size` × `size`.
    init(runtime: ONNXRuntime, modelPath: String, size: Int = inputSize) throws(ONNXRuntimeError) {
        session = try InferenceSession(runtime: runtime, modelPath: modelPath)
        self.size = size
    }

    /// Loads the model at `modelPath` with the neural engine's ONNX Runtime (`models`' library).
    convenience init(models: NeuralModels, modelPath: String, size: Int = inputSize) throws(ONNXRuntimeError) {
        try self.init(runtime: try ONNXRuntime.load(libraryPath: models.runtimePath), modelPath: modelPath, size: size)
    }

    /// The document mask of `image` (gray or colour), squashed to the model's input.
    func grid(of image: NeuralImage) throws(ONNXRuntimeError) -> Grid {
        try grid(ofInput: Self.squashed(image, size: size))
    }

    /// The mask of an image already `size` × `size`.
    func grid(ofInput image: NeuralImage) throws(ONNXRuntimeError) -> Grid {
        precondition(image.width == size && image.height == size)
        // Red, green, blue planes in [0, 1] (the training's order); a gray image fills all three.
        let order = image.planes.count == 3 ? [2, 1, 0] : [0, 0, 0]
        var values = [Float](repeating: 0, count: 3 * size * size)
        for (channel, plane) in order.enumerated() {
            let samples = image.planes[plane]
            for index in 0..<(size * size) { values[channel * size * size + index] = Float(samples[index]) / 255 }
        }
        let output = try session.run(Tensor(shape: [1, 3, size, size], values: values))
        guard output.shape == [1, 1, size, size], output.values.count == size * size else {
            throw ONNXRuntimeError(.runtime, "\(session.modelPath): unexpected document mask shape \(output.shape)")
        }
        return Grid(size: size, values: output.values)
    }

    /// `image` resized to `size` × `size` as the training resized it: Pillow's BILINEAR resampling (a triangle
    /// filter widened by the scale, so shrinking averages every pixel), horizontal pass then vertical, 8-bit
    /// samples in between, Pillow's 22-bit fixed-point weights: the same bytes as `Image.resize((size, size),
    /// Image.BILINEAR)` in Training/mask/maskdata.py.
    static func squashed(_ image: NeuralImage, size: Int) -> NeuralImage {
        resized(image, width: size, height: size)
    }

    /// `image` resized to `width` × `height` by Pillow's BILINEAR resampling, as `squashed(_:size:)`.
    static func resized(_ image: NeuralImage, width: Int, height: Int) -> NeuralImage {
        let columns = weights(from: image.width, to: width)
        let rows = weights(from: image.height, to: height)
        let planes = image.planes.map { plane in
            let across = [UInt8](unsafeUninitializedCapacity: width * image.height) { out, count in
                plane.withUnsafeBufferPointer { resampledRows($0, width: image.width, into: out, taps: columns) }
                count = width * image.height
            }
            return [UInt8](unsafeUninitializedCapacity: width * height) { out, count in
                across.withUnsafeBufferPointer { resampledColumns($0, width: width, into: out, taps: rows) }
                count = width * height
            }
        }
        return NeuralImage(width: width, height: height, planes: planes)
    }

    /// The horizontal pass: every row of `source` (`width` samples each) resampled by `taps` into `out`.
    private static func resampledRows(_ source: UnsafeBufferPointer<UInt8>, width: Int,
                                      into out: UnsafeMutableBufferPointer<UInt8>, taps: FixedTaps) {
        let outWidth = taps.first.count
        guard width > 0, outWidth > 0 else { return }
        taps.first.withUnsafeBufferPointer { first in
            taps.start.withUnsafeBufferPointer { start in
                taps.weights.withUnsafeBufferPointer { weights in
                    for y in 0..<(source.count / width) {
                        for x in 0..<outWidth {
                            let from = y * width + first[x], w = start[x]
                            var sum = 1 << (precisionBits - 1)
                            for k in 0..<(start[x + 1] - w) { sum &+= Int(source[from + k]) &* weights[w + k] }
                            out[y * outWidth + x] = clamped(sum)
                        }
                    }
                }
            }
        }
    }

    /// The vertical pass: `source` (rows of `width` samples) resampled down its columns by `taps` into `out`, a
    /// whole output row at a time (the same integer sums, added in the same order per sample). The sums stay below
    /// 2^31 (255 × weights summing to about 2^22), so the wrapping operators never wrap.
    private static func resampledColumns(_ source: UnsafeBufferPointer<UInt8>, width: Int,
                                         into out: UnsafeMutableBufferPointer<UInt8>, taps: FixedTaps) {
        guard width > 0 else { return }
        withUnsafeTemporaryAllocation(of: Int.self, capacity: width) { sums in
            taps.first.withUnsafeBufferPointer { first in
                taps.start.withUnsafeBufferPointer { start in
                    taps.weights.withUnsafeBufferPointer { weights in
                        for y in 0..<first.count {
                            for x in 0..<width { sums[x] = 1 << (precisionBits - 1) }
                            for k in 0..<(start[y + 1] - start[y]) {
                                let row = (first[y] + k) * width, weight = weights[start[y] + k]
                                for x in 0..<width { sums[x] &+= Int(source[row + x]) &* weight }
                            }
                            for x in 0..<width { out[y * width + x] = clamped(sums[x]) }
                        }
                    }
                }
            }
        }
    }

    private static let precisionBits = 32 - 8 - 2

    @inline(__always)
    private static func clamped(_ sum: Int) -> UInt8 { UInt8(truncatingIfNeeded: min(255, max(0, sum >> precisionBits))) }

    /// Pillow's fixed-point weights of one axis, flat: output sample `i` reads the inputs from `first[i]` on with
    /// the weights `weights[start[i]..<start[i + 1]]`.
    private struct FixedTaps {
        var first: [Int] = []
        var start: [Int] = [0]
        var weights: [Int] = []
    }

    /// For each output sample, its first input sample and the fixed-point weights from there (Pillow's
    /// `precompute_coeffs` with the bilinear filter, then `normalize_coeffs_8bpc`).
    private static func weights(from inSize: Int, to outSize: Int) -> FixedTaps {
        var fixed = FixedTaps()
        for (first, taps) in filterTaps(from: inSize, to: outSize) {
            fixed.first.append(first)
            for w in taps {
                fixed.weights.append(Int(w < 0 ? w * Double(1 << precisionBits) - 0.5 : w * Double(1 << precisionBits) + 0.5))
            }
            fixed.start.append(fixed.weights.count)
        }
        return fixed
    }

    /// For each output sample, its first input sample and the normalized weights from there (Pillow's
    /// `precompute_coeffs` with the bilinear filter; its 32-bit float images use them as they are).
    static func filterTaps(from inSize: Int, to outSize: Int) -> [(Int, [Double])] {
        let scale = Double(inSize) / Double(outSize)
        let filterScale = max(scale, 1)
        let support = filterScale
        return (0..<outSize).map { out in
            let centre = (Double(out) + 0.5) * scale
            let first = max(Int(centre - support + 0.5), 0)  // Int() truncates toward zero, as C's cast
            let last = min(Int(centre + support + 0.5), inSize)
            var taps = (first..<last).map { x in max(0, 1 - abs((Double(x) - centre + 0.5) / filterScale)) }
            let total = taps.reduce(0, +)
            if total != 0 { taps = taps.map { $0 / total } }
            return (first, taps)
        }
    }
}
