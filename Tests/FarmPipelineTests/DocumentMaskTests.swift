import Foundation
import Testing
import FarmCore
import FarmRuntime
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

    /// What ONNX Runtime's Python binding makes of `model` on the real frame squashed as training squashes it: the
    /// input's red, green and blue bytes and the mask, from the training venv's `python`.
    static func pythonMask(python: String, model: String, size: Int) throws -> (rgb: [UInt8], mask: [Double]) {
        let script = """
            import json, sys
            import numpy as np, onnxruntime as ort
            from PIL import Image
            sys.path.insert(0, sys.argv[1])
            import maskdata
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            session = ort.InferenceSession(sys.argv[2], options, providers=["CPUExecutionProvider"])
            x = maskdata.input_array(Image.open(sys.argv[3]), int(sys.argv[4]))[None]
            mask = session.run(None, {session.get_inputs()[0].name: x})[0]
            rgb = np.rint(x[0] * 255).astype(int).ravel().tolist()
            print(json.dumps({"rgb": rgb, "shape": list(mask.shape), "mask": mask.ravel().tolist()}))
            """
        let output = try Run.process(python, ["-c", script, Fixtures.packageRoot + "/Training/mask", model,
                                              Fixtures.path("midv500/\(frame).jpg"), String(size)])
        try #require(output.status == 0, "\(output.stderr)")
        let json = try JSON.parse(output.text)
        #expect(json["shape"]?.arrayValue?.compactMap(\.intValue) == [1, 1, size, size])
        let samples: [Int] = json["rgb"]?.arrayValue?.compactMap(\.intValue) ?? []
        let mask: [Double] = json["mask"]?.arrayValue?.compactMap(\.doubleValue) ?? []
        let rgb = samples.map { UInt8(clamping: $0) }
        return (rgb, mask)
    }

    @Test("the training script runs end to end in its tiny configuration, and the model it exports gives in ocrfarm's ONNX Runtime the mask Python's gives",
          .timeLimit(.minutes(10)))
    func tinyTraining() throws {
        let training = Fixtures.packageRoot + "/Training/mask"
        let setup = try Run.process(training + "/setup", ["--check"])
        try #require(setup.status == 0, "the training venv is missing: Training/mask/setup makes it (Scripts/test runs it)")
        let python = setup.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let folder = TemporaryDirectory("mask-tiny")
        let run = try Run.process(python, [training + "/train.py", "--tiny", "--out", folder.path])
        try #require(run.status == 0, "train.py --tiny: exit \(run.status)\n\(run.stderr)")
        // train.py checks its ONNX export against JAX's forward pass itself and says so.
        let said = run.text + run.stderr
        #expect(said.contains("ONNX vs JAX") && said.contains("inputs: ok"), "\(said)")
        let record = try JSON.parse(try FileSystem.readText(folder.file("training.json")))
        let size = try #require(record["size"]?.intValue)
        #expect(record["steps"]?.intValue == 30 && record["heldout_pixel_iou"]?.doubleValue != nil, "\(record)")

        let model = folder.file("document-mask.onnx")
        let reference = try Self.pythonMask(python: python, model: model, size: size)
        let count = size * size
        try #require(reference.rgb.count == 3 * count && reference.mask.count == count)
        // The same input bytes, as the network's blue, green and red planes.
        let planes: [[UInt8]] = [2, 1, 0].map { (channel: Int) -> [UInt8] in
            Array(reference.rgb[(channel * count)..<((channel + 1) * count)])
        }
        let input = NeuralImage(width: size, height: size, planes: planes)
        let mask = try DocumentMask(models: try NeuralModels.locate(), modelPath: model, size: size)
        let grid = try mask.grid(ofInput: input)
        #expect(grid.size == size && grid.values.allSatisfy { (0...1).contains($0) })
        let worst = zip(grid.values, reference.mask).map { abs(Double($0) - $1) }.max() ?? 1
        #expect(worst < 1e-5, "largest difference from Python's mask: \(worst)")
        // And from the photo itself, squashed by ocrfarm: the same mask within what one level of input makes.
        let frame = try NeuralImage(try Pix(contentsOfFile: Fixtures.path("midv500/\(Self.frame).jpg")))
        let fromPhoto = try mask.grid(of: frame)
        #expect(zip(fromPhoto.values, reference.mask).allSatisfy { abs(Double($0) - $1) < 0.05 })
    }

    @Test("the cluttered set's photos are each of one document: whole in the frame, no other sheet showing half its area",
          .timeLimit(.minutes(5)))
    func clearSubject() throws {
        let setup = try Run.process(Fixtures.packageRoot + "/Training/mask/setup", ["--check"])
        try #require(setup.status == 0, "the training venv is missing: Training/mask/setup makes it (Scripts/test runs it)")
        let python = setup.text.trimmingCharacters(in: .whitespacesAndNewlines)
        // The rule on drawn cases: a 400 × 300 target in a 1000 × 800 photo; the other sheets' corners.
        let script = """
            import json, sys
            sys.path.insert(0, sys.argv[1])
            import maskdata
            target = [(300, 250), (700, 250), (700, 550), (300, 550)]
            cases = {
                "alone": ([], target),
                "a sheet under it, its margins showing": ([[(280, 230), (720, 230), (720, 570), (280, 570)]], target),
                "target cut by the frame": ([], [(-50, 250), (350, 250), (350, 550), (-50, 550)]),
                "a page filling the frame under it": ([[(20, 20), (980, 20), (980, 780), (20, 780)]], target),
                "a second card beside it as large": ([[(750, 100), (990, 100), (990, 500), (750, 500)]], target),
                "a small card beside it": ([[(750, 100), (900, 100), (900, 200), (750, 200)]], target),
            }
            print(json.dumps({name: maskdata.clear_subject(quad, sheets, 1000, 800) for name, (sheets, quad) in cases.items()}))
            """
        let ruled = try Run.process(python, ["-c", script, Fixtures.packageRoot + "/Training/mask"])
        try #require(ruled.status == 0, "\(ruled.stderr)")
        let verdicts = try JSON.parse(ruled.text)
        for (name, clear) in [("alone", true), ("a sheet under it, its margins showing", true), ("target cut by the frame", false),
                              ("a page filling the frame under it", false), ("a second card beside it as large", false),
                              ("a small card beside it", true)] {
            #expect(verdicts[name]?.boolValue == clear, "\(name): \(verdicts)")
        }
        // Scripts/bench/cluttered writes the photos and their corners, each target whole in its frame.
        let folder = TemporaryDirectory("cluttered")
        let made = try Run.process(python, [Fixtures.packageRoot + "/Scripts/bench/cluttered", "--out", folder.path, "--count", "3"])
        try #require(made.status == 0, "\(made.stderr)")
        for index in 0..<3 {
            let truth = try JSON.parse(try FileSystem.readText(folder.file(String(format: "cluttered-%03d.json", index))))
            let width = try #require(truth["width"]?.doubleValue), height = try #require(truth["height"]?.doubleValue)
            let corners = truth["corners"]?.arrayValue?.compactMap { $0.arrayValue?.compactMap(\.doubleValue) } ?? []
            #expect(corners.count == 4 && corners.allSatisfy { $0.count == 2 && (0...width).contains($0[0]) && (0...height).contains($0[1]) },
                    "cluttered-\(index): \(truth)")
            #expect(FileSystem.exists(folder.file(String(format: "cluttered-%03d.jpg", index))))
        }
    }
}
