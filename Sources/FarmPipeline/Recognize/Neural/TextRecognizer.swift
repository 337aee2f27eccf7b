import ONNXRuntime

/// PP-OCRv6's CTC line recognizer: upright line crops in, their decoded characters out.
/// Owns one inference session and the model's dictionary; used on its page slot's thread only.
final class TextRecognizer {
    /// The model's input height; widths follow each batch's widest crop.
    static let inputHeight = 48
    /// The narrowest input, as a width:height ratio (the reference's `rec_img_shape` 48 × 320).
    static let minimumRatio = 320.0 / 48.0
    /// The widest input, as a ratio: a longer crop is squeezed (bounded memory on any line).
    static let maximumRatio = 100.0
    /// Crops per run (the reference's `rec_batch_num`).
    static let batchSize = 6

    let session: InferenceSession
    let decoder: CTCDecoder

    /// A recognizer over `session`, whose model carries its dictionary in the metadata key `character` unless
    /// `dictionary` gives it (one symbol per line).
    init(session: InferenceSession, dictionary given: String? = nil) throws(ONNXRuntimeError) {
        guard let dictionary = given ?? session.metadata("character"), !dictionary.isEmpty else {
            throw ONNXRuntimeError(.runtime, "\(session.modelPath) has no dictionary (metadata key \"character\")")
        }
        self.session = session
        decoder = CTCDecoder(dictionary: dictionary)
    }

    /// A crop's reading: the decoded line, and the width of one time step in the crop's pixels.
    struct Reading: Sendable {
        var line: DecodedLine
        var stepWidth: Double
    }

    /// Reads every crop. Crops are batched in order of their aspect ratio, each batch as wide as its widest crop
    /// (narrower ones padded with zeros on the right, as the reference does); `checkTime` runs before each batch.
    func read<E: Error>(_ crops: [NeuralImage], checkTime: () throws(E) -> Void) throws(ModelRunError<E>) -> [Reading] {
        func ratio(_ i: Int) -> Double { Double(crops[i].width) / Double(crops[i].height) }
        let order = crops.indices.sorted { ratio($0) < ratio($1) }
        var readings = [Reading?](repeating: nil, count: crops.count)
        let h = Self.inputHeight
        for start in stride(from: 0, to: order.count, by: Self.batchSize) {
            do throws(E) { try checkTime() } catch { throw .stopped(error) }
            let batch = Array(order[start..<min(order.count, start + Self.batchSize)])
            let widest = min(Self.maximumRatio, max(Self.minimumRatio, batch.map(ratio).max() ?? 0))
            let w = Int(Double(h) * widest)
            var values = [Float](repeating: 0, count: batch.count * 3 * h * w)
            var resizedWidths: [Int] = []
            for (slot, index) in batch.enumerated() {
                let resized = max(1, min(w, Int((Double(h) * ratio(index)).rounded(.up))))
                resizedWidths.append(resized)
                crops[index].writeNormalized(into: &values, offset: slot * 3 * h * w, height: h, resizedWidth: resized, paddedWidth: w)
            }
            let output: Tensor
            do { output = try session.run(Tensor(shape: [batch.count, 3, h, w], values: values)) } catch { throw .runtime(error) }
            let classes = decoder.classCount
            guard output.shape.count == 3, output.shape[0] == batch.count, output.shape[2] == classes, output.shape[1] > 0 else {
                throw .runtime(ONNXRuntimeError(.runtime, "\(session.modelPath): output shape \(output.shape) does not fit "
                                                + "\(batch.count) lines of \(classes) classes"))
            }
            let steps = output.shape[1]
            output.values.withUnsafeBufferPointer { all in
                for (slot, index) in batch.enumerated() {
                    let line = UnsafeBufferPointer(rebasing: all[(slot * steps * classes)..<((slot + 1) * steps * classes)])
                    // One step covers w / steps input pixels; the crop was scaled by resized / crop width.
                    let stepWidth = Double(w) / Double(steps) * Double(crops[index].width) / Double(resizedWidths[slot])
                    readings[index] = Reading(line: decoder.decode(line, steps: steps), stepWidth: stepWidth)
                }
            }
        }
        return readings.map { $0! }
    }
}
