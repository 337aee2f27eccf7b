import CLeptonica

/// An encoded image format that Leptonica knows.
public enum ImageFormat: Sendable, Equatable, CustomStringConvertible {
    case png, jpeg, tiff(TIFFCompression), pnm, bmp, gif, jpeg2000, webp, spix, pdf, postscript, unknown

    public enum TIFFCompression: Sendable, Equatable {
        case none, packBits, rle, g3, g4, lzw, zip, jpeg
    }

    init(leptonica code: Int32) {
        switch Int(code) {
        case IFF_PNG: self = .png
        case IFF_JFIF_JPEG: self = .jpeg
        case IFF_TIFF: self = .tiff(.none)
        case IFF_TIFF_PACKBITS: self = .tiff(.packBits)
        case IFF_TIFF_RLE: self = .tiff(.rle)
        case IFF_TIFF_G3: self = .tiff(.g3)
        case IFF_TIFF_G4: self = .tiff(.g4)
        case IFF_TIFF_LZW: self = .tiff(.lzw)
        case IFF_TIFF_ZIP: self = .tiff(.zip)
        case IFF_TIFF_JPEG: self = .tiff(.jpeg)
        case IFF_PNM: self = .pnm
        case IFF_BMP: self = .bmp
        case IFF_GIF: self = .gif
        case IFF_JP2: self = .jpeg2000
        case IFF_WEBP: self = .webp
        case IFF_SPIX: self = .spix
        case IFF_LPDF: self = .pdf
        case IFF_PS: self = .postscript
        default: self = .unknown
        }
    }

    var leptonicaCode: Int32 {
        switch self {
        case .png: Int32(IFF_PNG)
        case .jpeg: Int32(IFF_JFIF_JPEG)
        case .tiff(let compression):
            switch compression {
            case .none: Int32(IFF_TIFF)
            case .packBits: Int32(IFF_TIFF_PACKBITS)
            case .rle: Int32(IFF_TIFF_RLE)
            case .g3: Int32(IFF_TIFF_G3)
            case .g4: Int32(IFF_TIFF_G4)
            case .lzw: Int32(IFF_TIFF_LZW)
            case .zip: Int32(IFF_TIFF_ZIP)
            case .jpeg: Int32(IFF_TIFF_JPEG)
            }
        case .pnm: Int32(IFF_PNM)
        case .bmp: Int32(IFF_BMP)
        case .gif: Int32(IFF_GIF)
        case .jpeg2000: Int32(IFF_JP2)
        case .webp: Int32(IFF_WEBP)
        case .spix: Int32(IFF_SPIX)
        case .pdf: Int32(IFF_LPDF)
        case .postscript: Int32(IFF_PS)
        case .unknown: Int32(IFF_UNKNOWN)
        }
    }

    public var isTIFF: Bool { if case .tiff = self { true } else { false } }

    /// Short lowercase name, e.g. "png", "tiff-g4".
    public var description: String {
        switch self {
        case .png: "png"
        case .jpeg: "jpeg"
        case .tiff(let compression):
            switch compression {
            case .none: "tiff"
            case .packBits: "tiff-packbits"
            case .rle: "tiff-rle"
            case .g3: "tiff-g3"
            case .g4: "tiff-g4"
            case .lzw: "tiff-lzw"
            case .zip: "tiff-zip"
            case .jpeg: "tiff-jpeg"
            }
        case .pnm: "pnm"
        case .bmp: "bmp"
        case .gif: "gif"
        case .jpeg2000: "jp2"
        case .webp: "webp"
        case .spix: "spix"
        case .pdf: "pdf"
        case .postscript: "ps"
        case .unknown: "unknown"
        }
    }

    /// The format of encoded bytes, judged by content (magic numbers), not by a file name.
    public static func sniff(_ bytes: [UInt8]) -> ImageFormat {
        LeptonicaLibrary.prepare()
        guard bytes.count >= 12 else { return sniffShort(bytes) }
        var code: Int32 = 0
        let rc = bytes.withUnsafeBufferPointer { findFileFormatBuffer($0.baseAddress, &code) }
        _ = LeptonicaMessages.take()
        if rc != 0 { return sniffShort(bytes) }
        let format = ImageFormat(leptonica: code)
        if format == .unknown, bytes.starts(with: Array("%PDF-".utf8)) { return .pdf }
        return format
    }

    private static func sniffShort(_ bytes: [UInt8]) -> ImageFormat {
        bytes.starts(with: Array("%PDF-".utf8)) ? .pdf : .unknown
    }
}

/// What an image's header says, read without decoding its pixels.
public struct ImageHeader: Sendable, Equatable {
    public let format: ImageFormat
    public let width: Int
    public let height: Int
    public let bitsPerSample: Int
    public let samplesPerPixel: Int
    public let hasColormap: Bool

    public init(format: ImageFormat, width: Int, height: Int, bitsPerSample: Int, samplesPerPixel: Int, hasColormap: Bool) {
        self.format = format
        self.width = width
        self.height = height
        self.bitsPerSample = bitsPerSample
        self.samplesPerPixel = samplesPerPixel
        self.hasColormap = hasColormap
    }

    public var pixelCount: Int { width * height }
}
