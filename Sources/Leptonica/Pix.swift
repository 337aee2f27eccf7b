import CLeptonica
#if canImport(Glibc)
import Glibc
#endif

/// A rectangle in pixels: origin at the top left, y down.
public struct Box: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var area: Int { width * height }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// A Leptonica image. Owns one `PIX` reference, released with `pixDestroy` in `deinit`.
/// Pixels are never changed after creation: every operation returns a new image (only the resolution tag can be
/// set). Not `Sendable`: an image lives on one page slot's thread.
public final class Pix {
    package let pointer: UnsafeMutablePointer<PIX>

    /// Takes ownership of one reference to `pointer`.
    package init(owning pointer: UnsafeMutablePointer<PIX>) {
        self.pointer = pointer
    }

    deinit {
        var reference: UnsafeMutablePointer<PIX>? = pointer
        pixDestroy(&reference)
    }

    /// Wraps the result of a Leptonica call that returns a new image, or throws what Leptonica said.
    static func make(_ operation: String, _ result: UnsafeMutablePointer<PIX>?) throws(LeptonicaError) -> Pix {
        guard let result else { throw LeptonicaError.captured(operation, fallback: "failed") }
        return Pix(owning: result)
    }

    /// A new blank image: white for 8 and 32 bpp, 0 (white) for 1 bpp.
    public convenience init(width: Int, height: Int, depth: Int) throws(LeptonicaError) {
        LeptonicaLibrary.prepare()
        guard let pointer = pixCreate(Int32(width), Int32(height), Int32(depth)) else {
            throw LeptonicaError.captured("pixCreate", fallback: "cannot create \(width)x\(height)x\(depth)")
        }
        if depth > 1 { pixSetAll(pointer) }
        self.init(owning: pointer)
    }

    // MARK: Properties

    public var width: Int { Int(pointer.pointee.w) }
    public var height: Int { Int(pointer.pointee.h) }
    /// Bits per pixel: 1, 2, 4, 8, 16 or 32.
    public var depth: Int { Int(pointer.pointee.d) }
    /// Samples per pixel: 1 (gray), 3 (RGB), 4 (RGBA).
    public var samplesPerPixel: Int { Int(pointer.pointee.spp) }
    public var hasColormap: Bool { pointer.pointee.colormap != nil }
    /// Horizontal and vertical resolution in pixels per inch; 0 when the file did not say.
    public var resolution: (x: Int, y: Int) { (Int(pointer.pointee.xres), Int(pointer.pointee.yres)) }
    /// The format this image was decoded from.
    public var inputFormat: ImageFormat { ImageFormat(leptonica: pointer.pointee.informat) }
    public var bounds: Box { Box(x: 0, y: 0, width: width, height: height) }

    /// Sets the resolution tag (metadata only; pixels are unchanged).
    public func setResolution(x: Int, y: Int) {
        pixSetResolution(pointer, Int32(x), Int32(y))
    }

    /// The raw pixel value at (x, y): a gray level for 8 bpp, 0xRRGGBBAA for 32 bpp, 0/1 for 1 bpp.
    public func pixel(x: Int, y: Int) -> UInt32 {
        var value: UInt32 = 0
        pixGetPixel(pointer, Int32(x), Int32(y), &value)
        return value
    }

    /// True when both images have the same size, depth and pixels.
    public func hasSamePixels(as other: Pix) -> Bool {
        var same: Int32 = 0
        pixEqual(pointer, other.pointer, &same)
        return same != 0
    }

    // MARK: Encoding

    /// The image encoded in `format`. `quality` applies to JPEG (1–100).
    public func encoded(as format: ImageFormat, quality: Int = 85) throws(LeptonicaError) -> [UInt8] {
        LeptonicaLibrary.prepare()
        var data: UnsafeMutablePointer<UInt8>?
        var size = 0
        let rc: Int32
        if format == .jpeg {
            rc = pixWriteMemJpeg(&data, &size, pointer, Int32(quality), 0)
        } else {
            rc = pixWriteMem(&data, &size, pointer, format.leptonicaCode)
        }
        guard rc == 0, let data else {
            throw LeptonicaError.captured("encode \(format)", fallback: "cannot encode a \(depth)-bpp image as \(format)")
        }
        defer { lept_free(data) }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// Writes the image to `path` in `format`.
    public func write(toFile path: String, format: ImageFormat) throws(LeptonicaError) {
        let bytes = try encoded(as: format)
        guard let file = fopen(path, "wb") else {
            throw LeptonicaError("write \(path)", message: String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == bytes.count else {
            throw LeptonicaError("write \(path)", message: String(cString: strerror(errno)))
        }
    }
}
