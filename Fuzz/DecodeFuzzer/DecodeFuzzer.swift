import FarmCore
import FarmPipeline
import Leptonica
import TestSupport

/// Fuzzes the decode stage (`Decoder.decode`): encoded image bytes from a job to the image Tesseract reads.
///
/// Every input must either fail as `decode-failed` or `image-too-large` with a reason, or give an image within the
/// pixel limit with what the stage promises: 1, 8 or 32 bits per pixel, no colormap, no alpha.
@main
enum DecodeFuzzer {
    /// Smaller than a worker's limit so that headers claiming huge images are refused before they cost memory.
    static let limits = DecodeLimits(maxPixels: 4_000_000)

    static func main() {
        Fuzzing.main(name: "DecodeFuzzer", seeds: seeds, check: check)
    }

    /// Checks one input and says what became of it.
    static func check(_ bytes: [UInt8]) -> String {
        do {
            let page = try Decoder.decode(bytes, limits: limits)
            let image = page.image
            precondition(image.width > 0 && image.height > 0, "an empty image: \(page.findings)")
            precondition(image.width * image.height <= limits.maxPixels, "over the pixel limit: \(page.findings)")
            precondition([1, 8, 32].contains(image.depth), "depth \(image.depth): \(page.findings)")
            precondition(!image.hasColormap, "a colormap left: \(page.findings)")
            precondition(image.depth != 32 || image.samplesPerPixel != 4, "alpha left: \(page.findings)")
            return "decoded: " + String(decoding: page.findings.bytes, as: UTF8.self)
        } catch {
            precondition(error.stage == Decoder.stage, "stage \(error.stage)")
            precondition([.decodeFailed, .imageTooLarge].contains(error.code), "code \(error.code)")
            precondition(!error.message.isEmpty, "a failure without a reason")
            return "refused: \(error.code.rawValue): \(error.message)"
        }
    }

    /// A small page in every format the decode stage reads, written by Leptonica, and the small format fixtures.
    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        let page = try Pix(contentsOfFile: Fixtures.phototest)
        let gray = try page.grayscale().scaled(toWidth: 128, height: 96)
        let binary = try gray.binarized()
        var seeds: [(name: String, bytes: [UInt8])] = []
        let formats: [(String, Pix, ImageFormat)] = [
            ("gray.png", gray, .png), ("color.png", try gray.rgb(), .png), ("gray.jpg", gray, .jpeg),
            ("binary.tif", binary, .tiff(.g4)), ("g3.tif", binary, .tiff(.g3)), ("gray.tif", gray, .tiff(.zip)),
            ("lzw.tif", gray, .tiff(.lzw)), ("packbits.tif", binary, .tiff(.packBits)), ("plain.tif", gray, .tiff(.none)),
            ("gray.pnm", gray, .pnm), ("binary.pnm", binary, .pnm), ("gray.bmp", gray, .bmp), ("gray.gif", gray, .gif),
            ("gray.webp", gray, .webp), ("gray.jp2", gray, .jpeg2000),
        ]
        for (name, image, format) in formats {
            if let bytes = try? image.encoded(as: format) { seeds.append((name, bytes)) }
        }
        for name in ["g4.tif", "palette.png", "alpha.png", "gray16.png", "page.webp"] {
            seeds.append(("fixture-" + name, try Fixtures.read("formats/" + name)))
        }
        return seeds
    }
}
