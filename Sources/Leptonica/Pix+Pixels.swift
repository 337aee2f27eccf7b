import CLeptonica

/// An 8-bit gray raster in row-major order: what Swift-side algorithms work on.
public struct GrayPixels: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var data: [UInt8]

    public init(width: Int, height: Int, data: [UInt8]) {
        precondition(data.count == width * height)
        self.width = width
        self.height = height
        self.data = data
    }

    public init(width: Int, height: Int, value: UInt8 = 0) {
        self.init(width: width, height: height, data: [UInt8](repeating: value, count: width * height))
    }

    @inline(__always) public subscript(x: Int, y: Int) -> UInt8 {
        get { data[y * width + x] }
        set { data[y * width + x] = newValue }
    }
}

/// A 32-bit color raster, three planes.
public struct ColorPixels: Sendable {
    public let width: Int
    public let height: Int
    public var red: [UInt8]
    public var green: [UInt8]
    public var blue: [UInt8]
}

extension Pix {
    /// The pixels as 8-bit gray (converted first if needed).
    public func grayPixels() throws(LeptonicaError) -> GrayPixels {
        let gray = try grayscale()
        let w = gray.width, h = gray.height
        let wpl = Int(pixGetWpl(gray.pointer))
        guard let words = pixGetData(gray.pointer) else { throw LeptonicaError("pixGetData", message: "no pixel data") }
        var data = [UInt8](repeating: 0, count: w * h)
        data.withUnsafeMutableBufferPointer { out in
            let bytes = UnsafeRawPointer(words).assumingMemoryBound(to: UInt8.self)
            for y in 0..<h {
                let line = bytes + y * wpl * 4
                let row = out.baseAddress! + y * w
                // Leptonica keeps 8-bit pixels in 32-bit words, most significant byte first: byte x is at x ^ 3
                // on a little-endian machine.
                for x in 0..<w { row[x] = line[x ^ 3] }
            }
        }
        return GrayPixels(width: w, height: h, data: data)
    }

    /// The pixels as three 8-bit planes (gray images give three equal planes).
    public func colorPixels() throws(LeptonicaError) -> ColorPixels {
        let color = try rgb()
        let w = color.width, h = color.height
        let wpl = Int(pixGetWpl(color.pointer))
        guard let words = pixGetData(color.pointer) else { throw LeptonicaError("pixGetData", message: "no pixel data") }
        var red = [UInt8](repeating: 0, count: w * h)
        var green = red
        var blue = red
        for y in 0..<h {
            let line = words + y * wpl
            for x in 0..<w {
                let value = line[x]  // 0xRRGGBBAA
                let i = y * w + x
                red[i] = UInt8(truncatingIfNeeded: value >> 24)
                green[i] = UInt8(truncatingIfNeeded: value >> 16)
                blue[i] = UInt8(truncatingIfNeeded: value >> 8)
            }
        }
        return ColorPixels(width: w, height: h, red: red, green: green, blue: blue)
    }

    /// An 8-bit gray image from raw pixels.
    public convenience init(gray pixels: GrayPixels) throws(LeptonicaError) {
        LeptonicaLibrary.prepare()
        guard let pointer = pixCreate(Int32(pixels.width), Int32(pixels.height), 8), let words = pixGetData(pointer) else {
            throw LeptonicaError.captured("pixCreate", fallback: "cannot create \(pixels.width)x\(pixels.height)")
        }
        let wpl = Int(pixGetWpl(pointer))
        let bytes = UnsafeMutableRawPointer(words).assumingMemoryBound(to: UInt8.self)
        pixels.data.withUnsafeBufferPointer { input in
            for y in 0..<pixels.height {
                let line = bytes + y * wpl * 4
                let row = input.baseAddress! + y * pixels.width
                for x in 0..<pixels.width { line[x ^ 3] = row[x] }
            }
        }
        self.init(owning: pointer)
    }

    /// A 32-bit color image from three planes.
    public convenience init(color pixels: ColorPixels) throws(LeptonicaError) {
        LeptonicaLibrary.prepare()
        guard let pointer = pixCreate(Int32(pixels.width), Int32(pixels.height), 32), let words = pixGetData(pointer) else {
            throw LeptonicaError.captured("pixCreate", fallback: "cannot create \(pixels.width)x\(pixels.height)")
        }
        let wpl = Int(pixGetWpl(pointer))
        for y in 0..<pixels.height {
            let line = words + y * wpl
            for x in 0..<pixels.width {
                let i = y * pixels.width + x
                line[x] = UInt32(pixels.red[i]) << 24 | UInt32(pixels.green[i]) << 16 | UInt32(pixels.blue[i]) << 8
            }
        }
        pixSetSpp(pointer, 3)
        self.init(owning: pointer)
    }
}

extension Pix {
    /// A copy with its own pixels.
    public func copy() throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        return try Pix.make("pixCopy", pixCopy(nil, pointer))
    }

    /// An 8-bit image's raster, in place, for work that treats every pixel alike (a lookup, a division by another
    /// raster of the same size): `body` gets all rows, `bytesPerRow` apart, in Leptonica's order (pixel x of a row
    /// is byte x ^ 3 on a little-endian machine; a row may end in padding bytes). Writing changes this image and
    /// every clone of it, so call it on an image nobody else holds.
    public func withGrayBytes<R, E: Error>(
        _ body: (_ bytes: UnsafeMutableBufferPointer<UInt8>, _ bytesPerRow: Int) throws(E) -> R
    ) throws(E) -> R {
        precondition(depth == 8, "withGrayBytes needs an 8-bit image")
        let bytesPerRow = Int(pixGetWpl(pointer)) * 4
        let raw = UnsafeMutableRawPointer(pixGetData(pointer)!).assumingMemoryBound(to: UInt8.self)
        return try body(UnsafeMutableBufferPointer(start: raw, count: bytesPerRow * height), bytesPerRow)
    }
}
