import Foundation
import ONNXRuntime
import Testing

/// Where the tests find ONNX Runtime and the models: `OCRFARM_NEURAL_DIR`, else the default install folder.
/// A missing install fails the test that needs it (CI installs it); nothing here skips.
enum NeuralInstall {
    static let directory = ProcessInfo.processInfo.environment["OCRFARM_NEURAL_DIR"] ?? "/usr/local/lib/ocrfarm/neural"

    static let installHint = "ONNX Runtime and the models are not installed in \(directory): run the neural install "
        + "(onnxruntime 1.32.0's libonnxruntime.so.1.32.0 and the PP-OCR models in that folder, as CI does), "
        + "or point OCRFARM_NEURAL_DIR at such a folder"

    /// The installed shared library (`libonnxruntime.so*`); records a failure naming the install when absent.
    static func libraryPath() throws -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let library = names.filter { $0.hasPrefix("libonnxruntime.so") }.sorted().last
        return directory + "/" + (try #require(library, Comment(rawValue: installHint)))
    }

    /// The installed runtime, loaded once per process.
    static func runtime() throws -> ONNXRuntime { try ONNXRuntime.load(libraryPath: try libraryPath()) }

    /// The path of an installed model; records a failure naming the install when absent.
    static func model(_ name: String) throws -> String {
        let path = directory + "/" + name
        try #require(FileManager.default.fileExists(atPath: path), Comment(rawValue: "\(name) is missing. " + installHint))
        return path
    }

    static let classifier = "ch_ppocr_mobile_v2.0_cls_mobile.onnx"
    static let detector = "PP-OCRv6_det_small.onnx"
    static let recognizer = "PP-OCRv6_rec_small.onnx"
}

/// The golden inputs in Golden/ (binary PPM crops of phototest.tif written by Golden/make_golden.py).
enum GoldenInput {
    static let folder = (#filePath as NSString).deletingLastPathComponent + "/Golden"

    /// An RGB image: width, height and its bytes, row by row, three per pixel.
    struct RGB {
        let width: Int
        let height: Int
        let bytes: [UInt8]

        func pixel(x: Int, y: Int, channel: Int) -> UInt8 { bytes[(y * width + x) * 3 + channel] }
    }

    /// Reads a binary PPM ("P6\nW H\n255\n" then the bytes), the same parse as make_golden.py's.
    static func ppm(_ name: String) throws -> RGB {
        let data = try #require(FileManager.default.contents(atPath: folder + "/" + name), "Golden/\(name) is missing")
        let bytes = [UInt8](data)
        var fields: [String] = []
        var index = 0
        while fields.count < 3, let newline = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) {
            fields.append(String(decoding: bytes[index..<newline], as: UTF8.self))
            index = newline + 1
        }
        try #require(fields.count == 3 && fields[0] == "P6" && fields[2] == "255", "Golden/\(name) is no binary PPM")
        let size = fields[1].split(separator: " ").compactMap { Int($0) }
        try #require(size.count == 2 && bytes.count - index == size[0] * size[1] * 3, "Golden/\(name) is cut short")
        return RGB(width: size[0], height: size[1], bytes: Array(bytes[index...]))
    }

    /// The line classifier's batch of four, as make_golden.py makes it: the line crop as is; turned 180 degrees;
    /// its lower half twice; rolled down 12 rows. (x/255 - 0.5)/0.5 in float32, channels first.
    static func classifierBatch() throws -> Tensor {
        let line = try ppm("phototest-line.ppm")
        let (width, height) = (line.width, line.height)
        let sources: [(Int, Int) -> (Int, Int)] = [
            { x, y in (x, y) },
            { x, y in (width - 1 - x, height - 1 - y) },
            { x, y in (x, height / 2 + y % (height / 2)) },
            { x, y in (x, (y - 12 + height) % height) },
        ]
        var values: [Float] = []
        values.reserveCapacity(sources.count * 3 * height * width)
        for source in sources {
            for channel in 0..<3 {
                for y in 0..<height {
                    for x in 0..<width {
                        let (sx, sy) = source(x, y)
                        values.append((Float(line.pixel(x: sx, y: sy, channel: channel)) / 255 - 0.5) / 0.5)
                    }
                }
            }
        }
        return Tensor(shape: [sources.count, 3, height, width], values: values)
    }

    /// The detector's input, as make_golden.py makes it: the 96x64 block crop, ImageNet mean and deviation per
    /// channel in float32, channels first.
    static func detectorInput() throws -> Tensor {
        let block = try ppm("phototest-block.ppm")
        let mean: [Float] = [0.485, 0.456, 0.406]
        let deviation: [Float] = [0.229, 0.224, 0.225]
        var values: [Float] = []
        for channel in 0..<3 {
            for y in 0..<block.height {
                for x in 0..<block.width {
                    values.append((Float(block.pixel(x: x, y: y, channel: channel)) / 255 - mean[channel]) / deviation[channel])
                }
            }
        }
        return Tensor(shape: [1, 3, block.height, block.width], values: values)
    }
}
