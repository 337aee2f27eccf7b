import CLeptonica
#if canImport(Glibc)
import Glibc
#endif

/// A page image compressed the way a PDF image XObject carries it.
public struct CompressedImage: Sendable {
    public enum Encoding: Sendable {
        /// JPEG (PDF's DCTDecode).
        case jpeg
        /// CCITT Group 4 fax, for black and white (CCITTFaxDecode with K -1).
        case group4
        /// zlib (FlateDecode), with PNG predictors when `predictor` is set.
        case flate
    }

    public let bytes: [UInt8]
    public let encoding: Encoding
    public let width: Int
    public let height: Int
    public let bitsPerComponent: Int
    /// 1 (gray) or 3 (RGB).
    public let components: Int
    /// Flate data with a PNG predictor byte at the start of each row.
    public let predictor: Bool
    /// For a colormapped image: the palette as a PDF hex string (`<RRGGBB...>`) and its size.
    public let palette: (hex: String, count: Int)?
}

extension Pix {
    /// This image compressed for a PDF: black and white as Group 4, gray and color as JPEG of `quality`,
    /// colormapped images as flate.
    public func compressedForPDF(jpegQuality quality: Int = 75) throws(LeptonicaError) -> CompressedImage {
        LeptonicaLibrary.prepare()
        let type: Int32
        if depth == 1 {
            type = Int32(L_G4_ENCODE)
        } else if !hasColormap && (depth == 8 || depth == 32) {
            type = Int32(L_JPEG_ENCODE)
        } else {
            type = Int32(L_FLATE_ENCODE)
        }
        var data: UnsafeMutablePointer<L_COMP_DATA>?
        guard pixGenerateCIData(pointer, type, Int32(quality), 0, &data) == 0, let cid = data?.pointee,
              let compressed = cid.datacomp, cid.nbytescomp > 0
        else {
            l_CIDataDestroy(&data)
            throw LeptonicaError.captured("pixGenerateCIData", fallback: "cannot compress a \(width)x\(height) \(depth)-bit image")
        }
        defer { l_CIDataDestroy(&data) }
        let encoding: CompressedImage.Encoding = cid.type == Int32(L_JPEG_ENCODE) ? .jpeg
            : cid.type == Int32(L_G4_ENCODE) ? .group4 : .flate
        let palette: (String, Int)? = cid.ncolors > 0 && cid.cmapdatahex != nil
            ? (String(cString: cid.cmapdatahex), Int(cid.ncolors)) : nil
        return CompressedImage(bytes: Array(UnsafeBufferPointer(start: compressed, count: cid.nbytescomp)),
                               encoding: encoding, width: Int(cid.w), height: Int(cid.h), bitsPerComponent: Int(cid.bps),
                               components: Int(cid.spp), predictor: cid.predictor != 0, palette: palette)
    }
}

/// zlib compression (Leptonica's, which links zlib).
public enum Zlib {
    public static func compress(_ bytes: [UInt8]) throws(LeptonicaError) -> [UInt8] {
        LeptonicaLibrary.prepare()
        var size = 0
        let output = bytes.withUnsafeBufferPointer { zlibCompress($0.baseAddress, $0.count, &size) }
        guard let output else { throw LeptonicaError.captured("zlibCompress", fallback: "cannot compress \(bytes.count) bytes") }
        defer { free(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}
