import Foundation
import Testing
import FarmCore
@testable import FarmPipeline
import Leptonica
import TestSupport

/// The document mask's Pillow-style BILINEAR resize and the edge fit's gray image (issue 39) against a plain copy of
/// the code they replaced (`Reference`, the algorithm as it stood before the fast version): the same bytes and the
/// same floats, on drawn random images of many sizes and on a real phone photo.
@Suite("Document mask: the fast Pillow-style resize is the plain one, byte for byte")
struct DocumentMaskResizeTests {
    /// A seeded generator (SplitMix64): the same random images in every run.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// The resize and gray conversion as they were written before the fast version: the reference.
    enum Reference {
        static let precisionBits = 32 - 8 - 2

        static func clamped(_ sum: Int) -> UInt8 { UInt8(min(255, max(0, sum >> precisionBits))) }

        static func weights(from inSize: Int, to outSize: Int) -> [(Int, [Int])] {
            filterTaps(from: inSize, to: outSize).map { first, taps in
                (first, taps.map { w in Int(w < 0 ? w * Double(1 << precisionBits) - 0.5 : w * Double(1 << precisionBits) + 0.5) })
            }
        }

        /// The taps are unchanged by the fast version: the production ones.
        static func filterTaps(from inSize: Int, to outSize: Int) -> [(Int, [Double])] {
            DocumentMask.filterTaps(from: inSize, to: outSize)
        }

        static func resized(_ image: NeuralImage, width: Int, height: Int) -> NeuralImage {
            let columns = weights(from: image.width, to: width)
            let rows = weights(from: image.height, to: height)
            let planes = image.planes.map { plane in
                var across = [UInt8](repeating: 0, count: width * image.height)
                for y in 0..<image.height {
                    for x in 0..<width {
                        let (first, taps) = columns[x]
                        var sum = 1 << (precisionBits - 1)
                        for (k, weight) in taps.enumerated() { sum += Int(plane[y * image.width + first + k]) * weight }
                        across[y * width + x] = clamped(sum)
                    }
                }
                var out = [UInt8](repeating: 0, count: width * height)
                for y in 0..<height {
                    let (first, taps) = rows[y]
                    for x in 0..<width {
                        var sum = 1 << (precisionBits - 1)
                        for (k, weight) in taps.enumerated() { sum += Int(across[(first + k) * width + x]) * weight }
                        out[y * width + x] = clamped(sum)
                    }
                }
                return out
            }
            return NeuralImage(width: width, height: height, planes: planes)
        }

        /// EdgeImage's values as they were computed: resize, Pillow's RGB to L, the detector's Gaussian.
        static func edgeValues(_ photo: NeuralImage, scale: Double) -> (width: Int, height: Int, values: [Float]) {
            let small = scale == 1 ? photo : resized(
                photo, width: Int((Double(photo.width) * scale).rounded(.toNearestOrEven)),
                height: Int((Double(photo.height) * scale).rounded(.toNearestOrEven)))
            let gray: [Float]
            if small.planes.count == 3 {
                let (blue, green, red) = (small.planes[0], small.planes[1], small.planes[2])
                gray = (0..<(small.width * small.height)).map { (i: Int) -> Float in
                    let r = Int(red[i]) * 19595, g = Int(green[i]) * 38470, b = Int(blue[i]) * 7471
                    return Float((r + g + b + 0x8000) >> 16)
                }
            } else {
                gray = small.planes[0].map { Float($0) }
            }
            return (small.width, small.height, gaussianBlur(gray, width: small.width, height: small.height))
        }

        /// The detector's Gaussian blur (σ = 1) as it was written before the fast version.
        static func gaussianBlur(_ input: [Float], width: Int, height: Int) -> [Float] {
            let kernel: [Float] = [0.00443, 0.05400, 0.24203, 0.39905, 0.24203, 0.05400, 0.00443]
            var temp = input, output = input
            for y in 0..<height {
                for x in 0..<width {
                    var sum: Float = 0
                    for k in -3...3 { sum += kernel[k + 3] * input[y * width + min(max(x + k, 0), width - 1)] }
                    temp[y * width + x] = sum
                }
            }
            for y in 0..<height {
                for x in 0..<width {
                    var sum: Float = 0
                    for k in -3...3 { sum += kernel[k + 3] * temp[min(max(y + k, 0), height - 1) * width + x] }
                    output[y * width + x] = sum
                }
            }
            return output
        }
    }

    /// A random image: `planes` planes of uniform noise (seeded).
    static func randomImage(width: Int, height: Int, planes: Int, seed: UInt64) -> NeuralImage {
        var generator = SplitMix(state: seed)
        let made = (0..<planes).map { _ in
            (0..<(width * height)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        return NeuralImage(width: width, height: height, planes: made)
    }

    static let sizes: [(from: (Int, Int), to: (Int, Int))] = [
        ((1920, 1080), (128, 128)), ((1920, 1080), (1024, 576)), ((37, 53), (128, 128)), ((1000, 3), (7, 1)),
        ((1, 1), (5, 3)), ((5, 7), (1, 1)), ((300, 200), (300, 200)), ((640, 480), (641, 479)), ((129, 257), (64, 500)),
    ]

    @Test("random gray and colour images of many sizes, shrunk, enlarged and both: the reference's bytes",
          arguments: [1, 3])
    func randomImages(planes: Int) {
        for (index, size) in Self.sizes.enumerated() {
            let image = Self.randomImage(width: size.from.0, height: size.from.1, planes: planes,
                                         seed: UInt64(index * 10 + planes))
            let fast = DocumentMask.resized(image, width: size.to.0, height: size.to.1)
            let plain = Reference.resized(image, width: size.to.0, height: size.to.1)
            #expect(fast == plain, "\(size.from) → \(size.to), \(planes) plane(s)")
        }
    }

    @Test("extreme images (all 0, all 255, a 0/255 checkerboard): the reference's bytes")
    func extremes() {
        let (width, height) = (211, 97)
        let fills: [[UInt8]] = [
            [UInt8](repeating: 0, count: width * height), [UInt8](repeating: 255, count: width * height),
            (0..<(width * height)).map { ($0 % width + $0 / width) % 2 == 0 ? 0 : 255 },
        ]
        for fill in fills {
            let image = NeuralImage(width: width, height: height, planes: [fill, fill, fill])
            for to in [(128, 128), (13, 400), (500, 31)] {
                #expect(DocumentMask.resized(image, width: to.0, height: to.1)
                        == Reference.resized(image, width: to.0, height: to.1), "\(to)")
            }
        }
    }

    @Test("the edge image of random gray and colour images: the reference's floats, bit for bit")
    func edgeImageRandom() {
        for (planes, scale) in [(1, 0.5), (3, 0.5), (3, 1.0), (1, 1.0), (3, 0.37)] {
            let image = Self.randomImage(width: 403, height: 211, planes: planes, seed: UInt64(planes * 7) + 1)
            let fast = EdgeImage(image, scale: scale)
            let plain = Reference.edgeValues(image, scale: scale)
            #expect(fast.width == plain.width && fast.height == plain.height)
            #expect(fast.values.map(\.bitPattern) == plain.values.map(\.bitPattern), "\(planes) plane(s), scale \(scale)")
        }
    }

    @Test("the Gaussian blur of random values, images 1 to 403 px across, tiny and thin included: the reference's floats, bit for bit")
    func blurRandom() {
        var generator = SplitMix(state: 46)
        for (width, height) in [(1, 1), (1, 9), (9, 1), (2, 5), (6, 6), (7, 7), (8, 3), (13, 17), (403, 211)] {
            let values = (0..<(width * height)).map { _ in Float.random(in: -10...300, using: &generator) }
            let fast = DocumentDetector.gaussianBlur(values, width: width, height: height)
            let plain = Reference.gaussianBlur(values, width: width, height: height)
            #expect(fast.map(\.bitPattern) == plain.map(\.bitPattern), "\(width) × \(height)")
        }
    }

    /// Seconds of `body`'s best of `runs` runs.
    static func best<T>(_ runs: Int, _ body: () throws -> T) rethrows -> (T, Double) {
        var result: T? = nil
        var best = Double.infinity
        for _ in 0..<runs {
            let started = Date()
            result = try body()
            best = min(best, Date().timeIntervalSince(started))
        }
        return (result!, best)
    }

    @Test("a real 1920 × 1080 phone photo: its 128 × 128 input and its edge image are the reference's (times printed)")
    func realFrame() throws {
        let pix = try Pix(contentsOfFile: Fixtures.path("smartdoc15/background01_magazine001_frame_0107.jpeg"))
        let (photo, convert) = try Self.best(3) { try NeuralImage(pix) }
        #expect(photo.width == 1920 && photo.height == 1080 && photo.planes.count == 3)
        let (input, squash) = Self.best(3) { DocumentMask.squashed(photo, size: DocumentMask.inputSize) }
        let (plainInput, plainSquash) = Self.best(3) { Reference.resized(photo, width: 128, height: 128) }
        #expect(input == plainInput)
        let scale = min(1, DocumentMask.edgeLongSide / Double(max(photo.width, photo.height)))
        let (edges, edge) = Self.best(3) { EdgeImage(photo, scale: scale) }
        let (plainEdges, plainEdge) = Self.best(3) { Reference.edgeValues(photo, scale: scale) }
        #expect(edges.width == 1024 && edges.height == 576 && plainEdges.width == 1024 && plainEdges.height == 576)
        #expect(edges.values.map(\.bitPattern) == plainEdges.values.map(\.bitPattern))
        let (_, blur) = Self.best(3) { DocumentDetector.gaussianBlur(plainEdges.values, width: 1024, height: 576) }
        let (_, plainBlur) = Self.best(3) { Reference.gaussianBlur(plainEdges.values, width: 1024, height: 576) }
        // The mask's whole path on this photo: the model's grid (squash included) and the outline with the edge fit.
        let mask = try DocumentMaskTests.mask()
        let (grid, model) = try Self.best(3) { try mask.grid(of: photo) }
        let (outline, outlining) = Self.best(3) {
            DocumentMask.outline(of: grid, width: photo.width, height: photo.height, photo: photo)
        }
        #expect(outline?.count == 4)
        print(String(format: "DocumentMaskResize: NeuralImage(pix) %.1f ms; squashed to 128 %.1f ms (reference %.1f ms); "
                     + "EdgeImage %.1f ms (reference %.1f ms), of which gaussianBlur %.1f ms (reference %.1f ms); "
                     + "grid(of:) %.1f ms; outline with edge fit %.1f ms",
                     convert * 1000, squash * 1000, plainSquash * 1000, edge * 1000, plainEdge * 1000, blur * 1000,
                     plainBlur * 1000, model * 1000, outlining * 1000))
    }
}
