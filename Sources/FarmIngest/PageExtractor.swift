import FarmCore
import FarmRuntime
import Leptonica
import QPDF

/// Splits multi-page files into one file per page, so that a job carries one page, not the whole file.
public enum PageExtractor {
    /// Files larger than this are split when they hold more than one page: all of them (issue 37: a 1.6 MB PDF of
    /// 10,000 pages sent whole with each page was 16 GB on the wire).
    public static let splitThreshold = 0
    /// A TIFF frame larger than this is not decoded at submit (the worker refuses it as `image-too-large`).
    public static let maxPixels = 100_000_000

    /// One file per page of a PDF or multi-page TIFF, written into `directory` (created if needed), in page order.
    /// The pages are cut from `bytes`, the content that was hashed, never from the file again (it may have changed
    /// since). PDF pages are split by qpdf; TIFF pages are written losslessly: G4 for bilevel pages, PNG for the rest.
    /// A TIFF frame that cannot be decoded (damaged, over `maxPixels`) has no file (nil): its page is sent in the
    /// whole file and fails at the worker with its reason, as before.
    public static func split(_ bytes: [UInt8], kind: SourceKind, source: RawPath, pages: Int,
                             into directory: String) throws -> [RawPath?]
    {
        try FileSystem.makeDirectory(directory)
        switch kind {
        case .pdf:
            let whole = directory + "/source.pdf"
            try FileSystem.write(bytes, to: whole)
            defer { FileSystem.remove(whole) }
            return try QPDF.splitPages(whole, into: directory).map { RawPath($0) }
        case .image:
            var files: [RawPath?] = []
            let digits = String(pages).count
            for index in 0..<pages {
                guard let page = try? Pix(encoded: bytes, page: index, maxPixels: maxPixels) else {
                    files.append(nil)
                    continue
                }
                let bilevel = page.depth == 1
                let number = String(index + 1)
                let name = "page-" + String(repeating: "0", count: max(0, digits - number.count)) + number + (bilevel ? ".tif" : ".png")
                let path = directory + "/" + name
                try FileSystem.write(try page.encoded(as: bilevel ? .tiff(.g4) : .png), to: path)
                files.append(RawPath(path))
            }
            return files
        case .invalid:
            return []
        }
    }
}
