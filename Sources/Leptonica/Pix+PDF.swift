import CLeptonica
#if canImport(Glibc)
import Glibc
#endif

extension Pix {
    /// This image compressed for a PDF: black and white as Group 4, gray and color as JPEG of `quality`,
    /// colormapped images as flate (`kept` says whether every pixel of this image survives).
    public func compressedForPDF(jpegQuality quality: Int = 75) throws(LeptonicaError) -> PDFPageImage {
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
        let encoding: PDFPageImage.Encoding = cid.type == Int32(L_JPEG_ENCODE) ? .jpeg
            : cid.type == Int32(L_G4_ENCODE) ? .group4 : .flate
        let palette: (String, Int)? = cid.ncolors > 0 && cid.cmapdatahex != nil
            ? (String(cString: cid.cmapdatahex), Int(cid.ncolors)) : nil
        return PDFPageImage(bytes: Array(UnsafeBufferPointer(start: compressed, count: cid.nbytescomp)),
                            encoding: encoding, width: Int(cid.w), height: Int(cid.h), bitsPerComponent: Int(cid.bps),
                            components: Int(cid.spp), predictor: cid.predictor != 0, palette: palette,
                            kept: encoding == .jpeg ? .converted("JPEG of quality \(quality)") : .lossless)
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
