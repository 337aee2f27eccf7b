import ONNXRuntime

/// The 0°/180° line classifier (PaddleOCR's mobile v2.0 model): which line crops are upside down.
/// Owns one inference session; used on its page slot's thread only.
final class LineClassifier {
    /// The model's input: 3 × 48 × 192.
    static let inputHeight = 48, inputWidth = 192
    /// Crops per run (the reference's `cls_batch_num`).
    static let batchSize = 6
    /// A crop is turned only when the classifier is at least this sure (the reference's `cls_thresh`).
    static let threshold: Float = 0.9

    let session: InferenceSession

    init(session: InferenceSession) {
        self.session = session
    }

    /// Whether each crop is upside down, surely. Crops are batched in order of their aspect ratio (as the
    /// reference does, so a batch's crops are alike); `checkTime` runs before each batch and may stop the page.
    func upsideDown<E: Error>(_ crops: [NeuralImage], checkTime: () throws(E) -> Void) throws(ModelRunError<E>) -> [Bool] {
        let order = crops.indices.sorted {
            Double(crops[$0].width) / Double(crops[$0].height) < Double(crops[$1].width) / Double(crops[$1].height)
        }
        var flags = [Bool](repeating: false, count: crops.count)
        let h = Self.inputHeight, w = Self.inputWidth
        for start in stride(from: 0, to: order.count, by: Self.batchSize) {
            do throws(E) { try checkTime() } catch { throw .stopped(error) }
            let batch = Array(order[start..<min(order.count, start + Self.batchSize)])
            var values = [Float](repeating: 0, count: batch.count * 3 * h * w)
            for (slot, index) in batch.enumerated() {
                let crop = crops[index]
                let resized = min(w, Int((Double(h) * Double(crop.width) / Double(crop.height)).rounded(.up)))
                crop.writeNormalized(into: &values, offset: slot * 3 * h * w, height: h, resizedWidth: max(1, resized), paddedWidth: w)
            }
            let output: Tensor
            do { output = try session.run(Tensor(shape: [batch.count, 3, h, w], values: values)) } catch { throw .runtime(error) }
            guard output.values.count >= batch.count * 2 else {
                throw .runtime(ONNXRuntimeError(.runtime, "\(session.modelPath): unexpected classifier output shape \(output.shape)"))
            }
            for (slot, index) in batch.enumerated() {
                let upright = output.values[slot * 2], turned = output.values[slot * 2 + 1]
                flags[index] = turned > upright && turned > Self.threshold
            }
        }
        return flags
    }
}
