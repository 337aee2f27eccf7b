import Foundation
import Testing
import FarmCore
@testable import FarmPipeline
import Leptonica
import TestSupport

/// The learned document mask (issue 39): the repository's model through ONNX Runtime, against the golden files
/// Training/mask/golden.py wrote with ONNX Runtime's Python binding (Tests/Fixtures/document-mask/). Needs the
/// neural engine's ONNX Runtime (Scripts/install-neural); a missing install fails.
@Suite("Document mask: the learned model's golden output")
struct DocumentMaskTests {
    /// A held-out frame: its document type's backgrounds and card were not in training.
    static let frame = "midv500_31_07"
    static let modelPath = (#filePath as NSString).deletingLastPathComponent
        + "/../../Training/mask/model/document-mask.onnx"

    static func mask() throws -> DocumentMask {
        try DocumentMask(models: try NeuralModels.locate(), modelPath: modelPath)
    }

    /// A binary PNM (P5 gray or P6 colour): its side and bytes.
    static func pnm(_ name: String) throws -> (width: Int, height: Int, channels: Int, bytes: [UInt8]) {
        let bytes = try Fixtures.read("document-mask/" + name)
        var fields: [String] = []
        var index = 0
        while fields.count < 3, let newline = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) {
            fields.append(String(decoding: bytes[index..<newline], as: UTF8.self))
            index = newline + 1
        }
        let channels = fields.first == "P6" ? 3 : 1
        let size = fields.count == 3 ? fields[1].split(separator: " ").compactMap { Int($0) } : []
        try #require(size.count == 2 && bytes.count - index == size[0] * size[1] * channels, "\(name) is no binary PNM")
        return (size[0], size[1], channels, Array(bytes[index...]))
    }

    /// The golden input as the network's image: blue, green, red planes.
    static func goldenInput() throws -> NeuralImage {
        let ppm = try pnm(frame + ".input.ppm")
        let count = ppm.width * ppm.height
        let planes = [2, 1, 0].map { channel in (0..<count).map { ppm.bytes[$0 * 3 + channel] } }
        return NeuralImage(width: ppm.width, height: ppm.height, planes: planes)
    }

    @Test("the frame squashed to 128 × 128 is Pillow's BILINEAR resize of it, within one level")
    func squashedAsPillow() throws {
        let frame = try NeuralImage(try Pix(contentsOfFile: Fixtures.path("midv500/\(Self.frame).jpg")))
        let ours = DocumentMask.squashed(frame, size: DocumentMask.inputSize)
        let golden = try Self.goldenInput()
        var worst = 0
        for plane in 0..<3 {
            for (a, b) in zip(ours.planes[plane], golden.planes[plane]) { worst = max(worst, abs(Int(a) - Int(b))) }
        }
        #expect(worst <= 1, "largest difference \(worst) levels")
    }

    @Test("the model's mask of the golden input is ONNX Runtime's in Python, within one level in 255")
    func goldenMask() throws {
        let grid = try Self.mask().grid(ofInput: try Self.goldenInput())
        let golden = try Self.pnm(Self.frame + ".mask.pgm")
        #expect(grid.size == 128 && golden.bytes.count == 128 * 128)
        var worst: Float = 0
        for (value, expected) in zip(grid.values, golden.bytes) { worst = max(worst, abs(value * 255 - Float(expected))) }
        #expect(worst <= 1.0, "largest difference \(worst) / 255")
    }

    @Test("the mask of a held-out real frame covers its document: cell IoU with the true corners ≥ 0.9")
    func coversTheDocument() throws {
        let frame = try NeuralImage(try Pix(contentsOfFile: Fixtures.path("midv500/\(Self.frame).jpg")))
        let grid = try Self.mask().grid(of: frame)
        let json = try JSON.parse(try Fixtures.read("midv500/\(Self.frame).json"))
        let corners = try #require(json["corners"]?.arrayValue).map { pair in
            Point((pair.arrayValue?[0].doubleValue ?? 0) * 128 / Double(frame.width),
                  (pair.arrayValue?[1].doubleValue ?? 0) * 128 / Double(frame.height))
        }
        var both = 0, either = 0
        for y in 0..<128 {
            for x in 0..<128 {
                let inside = Self.convex(corners, contains: Point(Double(x) + 0.5, Double(y) + 0.5))
                let found = grid.value(x, y) > 0.5
                if inside && found { both += 1 }
                if inside || found { either += 1 }
            }
        }
        let iou = Double(both) / Double(max(1, either))
        #expect(iou >= 0.9, "cell IoU \(iou)")
    }

    /// Whether `point` lies inside the convex polygon `corners` (either winding).
    static func convex(_ corners: [Point], contains point: Point) -> Bool {
        let sides = corners.indices.map { i -> Double in
            let a = corners[i], b = corners[(i + 1) % corners.count]
            return (b.x - a.x) * (point.y - a.y) - (b.y - a.y) * (point.x - a.x)
        }
        return sides.allSatisfy { $0 >= 0 } || sides.allSatisfy { $0 <= 0 }
    }

    @Test("the option is off without OCRFARM_DOCUMENT_MASK; a named model that is not there is an error naming it")
    func option() throws {
        #expect(try DocumentMask.fromEnvironment([:]) == nil)
        let missing = NSTemporaryDirectory() + "no-such-mask-\(UUID().uuidString).onnx"
        var environment = ProcessInfo.processInfo.environment
        environment[DocumentMask.environmentKey] = missing
        do {
            _ = try DocumentMask.fromEnvironment(environment)
            Issue.record("a missing model loaded")
        } catch {
            #expect("\(error)".contains(missing), "\(error)")
        }
    }
}
